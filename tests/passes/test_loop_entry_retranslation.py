"""A loop whose body leaves channels-last an image that entered in torch's layout is translated again for the image
converted once before it (statements.py `_for_lines`). The classes the first pass translated on the way are
translated again too: a block class first called in the body with the image inside a tuple (NeMo's Jasper/QuartzNet
`MaskedConv1d` taking `(x, lens)`, here a masked Conv1d subclass) had been fixed to torch's layout by that first
pass, so every call converted its input back (9 Transposes here before, 39 in a QuartzNet); now it takes the
image as the loop holds it. The port matches torch eagerly and under XLA."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port

SOURCE = '''
import torch
import torch.nn as nn


class MaskedConv(nn.Conv1d):
    def forward(self, inp):
        x, lens = inp
        mask = torch.arange(x.size(2)).expand(len(lens), x.size(2)) >= lens.unsqueeze(1)
        x = x.masked_fill(mask.unsqueeze(1), 0)
        return super().forward(x), lens


class Block(nn.Module):
    def __init__(self, channels=6, repeat=3):
        super().__init__()
        self.layers = nn.ModuleList()
        for _ in range(repeat):
            self.layers.extend([MaskedConv(channels, channels, 5, padding=2), nn.BatchNorm1d(channels), nn.ReLU()])

    def forward(self, xs, lens):
        out = xs[-1]
        for layer in self.layers:
            if isinstance(layer, MaskedConv):
                out, lens = layer((out, lens))
            else:
                out = layer(out)
        return out + xs[-1]


class Net(nn.Module):
    def __init__(self, channels=6, classes=4):
        super().__init__()
        self.block = Block(channels)
        self.head = nn.Conv1d(channels, classes, 1)

    def forward(self, x):
        lens = torch.full((x.size(0),), x.size(2), dtype=torch.long) - 1
        return self.head(self.block([x], lens))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("loop_entry"), SOURCE, input_specs=("6,11",))


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 13), seed=st.integers(0, 2**16))
def test_block_called_in_a_loop_on_a_tuple_matches_torch(pair, batch, length, seed):
    x = np.random.default_rng(seed).standard_normal((batch, 6, length)).astype(np.float32)
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)


def test_the_tuple_layer_takes_the_image_as_the_loop_holds_it(pair):
    """3: the list's image converted on entry to the loop, again for the residual `out + xs[-1]`, and the output."""
    x = np.random.default_rng(0).standard_normal((2, 6, 11)).astype(np.float32)
    assert count_transposes(pair.keras_model, [x]) <= 3
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "layer((out, lens)" in code and "to_channels_first" not in code, code
