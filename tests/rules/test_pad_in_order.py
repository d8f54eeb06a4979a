"""`F.pad` of a tensor held permuted: DeepSpeech's lookahead convolution takes (T, N, H) features, turns them
`x.transpose(0, 1).transpose(1, 2)` into (N, H, T) (left pending: the data stays (T, N, H)), pads the time dim on
the right and runs a depthwise Conv1d. The pad now runs on the axis that holds the time dim (`pad_in_order`), where
it had made the permute first: one transpose fewer (3 -> 2: into the convolution and out of the model stay).
Drawn pad widths, modes and lengths; the port matches torch eagerly and under XLA."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Lookahead(nn.Module):
    def __init__(self, features, context, mode):
        super().__init__()
        self.pad = (0, context - 1)
        self.mode = mode
        self.conv = nn.Conv1d(features, features, context, groups=features, bias=False)

    def forward(self, x):
        x = x.transpose(0, 1).transpose(1, 2)
        x = F.pad(x, pad=self.pad, mode=self.mode)
        x = self.conv(x)
        return x.transpose(1, 2).transpose(0, 1)


class Net(nn.Module):
    def __init__(self, mode="constant"):
        super().__init__()
        self.rnn = nn.GRU(6, 8)
        self.lookahead = Lookahead(8, 3, mode)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        x, _ = self.rnn(x)  # (T, N, F): sequence-first features
        x = self.lookahead(x)
        return self.fc(x)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return snippet_ports(tmp_path_factory, SOURCE, "2,6", "mode")


@pytest.mark.parametrize("mode", ["constant", "replicate"])
@settings(max_examples=3, deadline=None)
@given(length=st.integers(3, 9), batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_lookahead_pads_the_time_axis_where_it_lies(ported, mode, length, batch, seed):
    pair = PortedPair(ported(mode), seed=batch)
    x = np.random.default_rng(seed).standard_normal((length, batch, 6)).astype("float32")
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
    assert "pad_in_order(" in Path(pair.keras_module.__file__).read_text()
    assert count_transposes(pair.keras_model, [x]) <= 2  # into the convolution, out of the model (3 before)
