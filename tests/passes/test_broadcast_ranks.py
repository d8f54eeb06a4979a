"""A channels-last image broadcast against a tensor in torch's order (porter/ir/layout.py `unify`): one of fewer
dims is padded and has its channels moved last (`broadcast_channels_last`), but one of more dims
(`y * g.view(2, 1, c, 1, 1)`, torch's result then has rank 5) cannot pair with the image's channels-last axes: with
its rank known the operands meet in torch's order (before: a wrong shape, or an error, from a port reported as
converted); with its rank unknown when translated, the port says so when it runs instead of giving other numbers.
Sizes drawn by hypothesis (batch 1, odd sizes)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs, random_input

SOURCE = '''
import torch
import torch.nn as nn


def reshaped(t, shape):
    return t.reshape(shape)


class Net(nn.Module):
    def __init__(self, how="known_rank", shape=(2, 1, 6, 1, 1)):
        super().__init__()
        self.how = how
        self.shape = shape
        self.gain = nn.Parameter(torch.rand(12))
        self.conv = nn.Conv2d(3, 6, 1)

    def forward(self, x):
        y = self.conv(x)
        if self.how == "known_rank":
            return y * self.gain.view(2, 1, 6, 1, 1) + self.gain[:6].view(1, 6, 1, 1)
        if self.how == "unknown_lower_rank":
            return y * reshaped(self.gain[:6], (6, 1, 1))
        return y + reshaped(self.gain, self.shape)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    ports = snippet_ports(tmp_path_factory, SOURCE, "3,5,7", "how")
    return lambda how: PortedPair(ports(how), seed=2)


@pytest.mark.parametrize("how", ["known_rank", "unknown_lower_rank"])
@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([1, 3, 4]), width=st.sampled_from([2, 5]),
       seed=st.integers(0, 2**16))
def test_broadcasts_match_torch(ported, how, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(how), [x], tolerance=1e-5, what=f"{how} x{x.shape}")
    assert_same_outputs(ported(how), [x], tolerance=1e-5, what=f"{how} x{x.shape} XLA", jit=True)


def test_a_tensor_of_unknown_higher_rank_is_reported_when_it_runs(ported):
    pair = ported("unknown_higher_rank")
    with pytest.raises(ValueError, match="rank 5 broadcast against a channels-last image of rank 4"):
        pair.run_keras([np.zeros((2, 3, 5, 7), np.float32)])
