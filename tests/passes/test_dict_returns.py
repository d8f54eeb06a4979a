"""A block returning a dict of features (`return {"low": low, "out": self.layer2(low)}`, DeepLabV3+'s backbone,
torchvision's IntermediateLayerGetter-style heads) hands its caller tensors in torch's order; `f["low"]` read back in
the caller was untyped, so it met the channels-last images of the caller as if it were one: `self.head(f["out"]) +
f["low"]` added an image in torch's order to a channels-last one (a crash where the sizes differ, a silent
mismatch where channels, height and width agree), and `torch.cat([f["x"], y], 1)` joined them on the wrong axis.
The dict display's string keys now carry each item's Value (ir/values.py `KeyedItems`), which `d["key"]` reads back
in the caller; a cat's untyped item is a tensor in torch's order. A display of channels-last images is now held as
it lies (passes/feature_dicts.py). Matches torch for drawn sizes, square ones where
the channel count equals the spatial sizes included."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Body(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a = nn.Conv2d(3, c, 3, padding=1)
        self.b = nn.Conv2d(c, c, 3, stride=2, padding=1)

    def forward(self, x):
        low = self.a(x)
        return {"low": low, "out": self.b(low)}


class OpModel(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.body = Body(c)
        self.head = nn.Conv2d(c, c, 1)

    def forward(self, x):
        f = self.body(x)
        low, out = f["low"], f["out"]
        up = F.interpolate(self.head(out), size=low.shape[-2:], mode="nearest")
        joined = torch.cat([f["low"], up], 1)
        return joined[:, :8] + f["low"] * up
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("dict_returns"), SOURCE, input_specs=("3,8,8",))


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), size=st.sampled_from([8, 8, 10, 15]))
def test_port_matches_torch(pair, seed, batch, size):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, size, size))])


def test_items_are_typed_where_the_caller_reads_them(pair):
    """The dict's images stay channels-last (passes/feature_dicts.py): read by key as they lie, nothing converted
    between the block and its caller (before, each item went to torch's layout and back)."""
    from tests.corpus.test_torchvision import xla_transposes

    code = (pair.out_dir / "op_model_keras.py").read_text()
    forward = code[code.index("class OpModel"):]
    assert 'f["low"]' in forward and "to_channels" not in forward
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 10, 10))) <= 2
