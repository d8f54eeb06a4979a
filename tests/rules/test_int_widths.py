"""Integer tensors of different widths meeting in arithmetic (`lengths + t.int()`, an int32 counter plus int64
lengths): torch promotes them, TensorFlow refuses mixed dtypes. A narrow integer dtype porter can see (`.int()`,
`.to(torch.int32)`, `dtype=torch.int32`) is noted on the value, and arithmetic meeting another integer tensor runs
through the runtime's `ints_like_torch`, checked here against torch's own promotion on drawn dtypes and ranks.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.passes.snippet_ports import assert_matches_torch, snippet_ports

DTYPES = ["int8", "uint8", "int16", "int32", "int64", "float32"]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES), st.integers(0, 2), st.integers(0, 2),
       st.sampled_from(["+", "-", "*", "//", "%"]), st.integers(0, 2 ** 16))
def test_ints_like_torch_promotes_as_torch(first, second, rank_first, rank_second, operator, seed):
    import tensorflow as tf
    import torch

    from porter.runtime.tensor_ops import ints_like_torch

    rng = np.random.default_rng(seed)
    a = rng.integers(1, 9, size=(3,) * rank_first).astype(first)
    b = rng.integers(1, 9, size=(3,) * rank_second).astype(second)
    ops = {"+": (lambda x, y: x + y), "-": (lambda x, y: x - y), "*": (lambda x, y: x * y),
           "//": (lambda x, y: x // y), "%": (lambda x, y: x % y)}
    expected = ops[operator](torch.from_numpy(a), torch.from_numpy(b))
    got = ops[operator](*ints_like_torch(tf.constant(a), tf.constant(b)))
    assert got.dtype.name == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


SOURCE = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, how="int"):
        super().__init__()
        self.how = how
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        lengths = (x[:, :, 0] > 0).long().sum(1)
        if self.how == "int":
            longest = torch.max(lengths).int()
        elif self.how == "to":
            longest = lengths.max().to(torch.int32)
        else:
            longest = torch.zeros(1, dtype=torch.int32) + x.size(1) // 2
        klengths = lengths + x.size(1) - longest
        positions = torch.arange(x.size(1))[None, :]
        mask = positions < klengths[:, None]
        return self.proj(x) * mask[:, :, None].float() + klengths[:, None, None].float()
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return snippet_ports(tmp_path_factory, SOURCE, "7,4", "how")


@pytest.mark.parametrize("how", ["int", "to", "created"])
@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 9), seed=st.integers(0, 2 ** 16))
def test_narrow_and_wide_integer_tensors_add_as_in_torch(ported, how, batch, length, seed):
    assert_matches_torch(ported(how), seed, (batch, length, 4))


TIMESTEPS = '''
import math
import torch
import torch.nn as nn


class PosEmb(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, t):
        half = self.dim // 2
        freqs = torch.exp(torch.arange(half) * -(math.log(10000) / (half - 1)))
        angles = t[:, None] * freqs[None, :]
        return torch.cat((angles.sin(), angles.cos()), dim=-1)


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = PosEmb(8)
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        t = torch.zeros(x.shape[0], dtype=torch.long) + 3
        steps = torch.full((x.shape[0],), 7, dtype=torch.int64)
        return self.conv(x) + (self.pos(t) + self.pos(steps))[:, :, None, None]
'''


@pytest.fixture(scope="module")
def timesteps_pair(tmp_path_factory):
    from tests.rules.op_ports import port

    return port(tmp_path_factory.mktemp("long_factory"), TIMESTEPS, input_specs=("3,5,6",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2 ** 16), batch=st.integers(1, 3))
def test_a_long_factory_is_an_integer_tensor(timesteps_pair, seed, batch):
    """`torch.zeros(b, dtype=torch.long)` (a diffusion model's timesteps made in forward) is an integer tensor: its
    product with float frequencies promotes as torch's does (TensorFlow refused int64 * float32 at run time)."""
    from tests.rules.op_ports import assert_same_outputs, random_input

    assert_same_outputs(timesteps_pair, [random_input(seed, (batch, 3, 5, 6))])
