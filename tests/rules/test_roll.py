"""Property tests of the `torch.roll` rule (porter/rules/roll.py) against real torch: on the channels-last output
of a Conv2d, on a transpose still pending, on torch's layout, and without dims (the flattened roll). Shifts are
drawn by hypothesis from beyond the sizes in both directions, as ints and as tuples over several dims."""

import textwrap

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, conv_model, port, random_input

# Each op reads the shifts from the model's constructor (`s`), so one port serves every drawn shift.
OPS = {
    "channels": ("y = torch.roll(y, self.s[0], dims=1)", 1),
    "height_negative_dim": ("y = y.roll(self.s[0], -2)", 1),
    "width_batch_tuple": ("y = torch.roll(y, (self.s[0], self.s[1]), (-1, 0))", 2),
    "three_dims_list": ("y = torch.roll(y, shifts=[self.s[0], self.s[1], self.s[2]], dims=[3, 1, 2])", 3),
    "same_dim_twice": ("y = torch.roll(y, (self.s[0], self.s[1]), dims=(2, 2))", 2),
    "flattened": ("y = torch.roll(y, self.s[0])", 1),
    "pending_transpose": ("y = torch.roll(y.transpose(1, 3), self.s[0], 1) * 2.0", 1),
    "int_dim_tuple_shift": ("y = torch.roll(y, (self.s[0],), 3)", 1),
}


def roll_model(op):
    source = conv_model(op)
    return source.replace("super().__init__()", "super().__init__()\n        self.s = tuple(s)").replace(
        "def __init__(self):", "def __init__(self, s=(0, 0, 0)):")


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), roll_model(OPS[name][0])))


@pytest.mark.parametrize("name", sorted(OPS))
@given(batch=st.integers(1, 3), height=st.sampled_from([1, 3, 4, 7]), width=st.sampled_from([2, 5, 8]),
       shifts=st.lists(st.integers(-20, 20), min_size=3, max_size=3), seed=st.integers(0, 2**16))
def test_roll_matches_torch(ported, name, batch, height, width, shifts, seed):
    pair = ported(name)
    pair.torch_model.s = pair.keras_model.s = tuple(shifts)
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pair, [x], tolerance=1e-6, what=f"{name} shifts={shifts} x{x.shape}")


def test_roll_keeps_channels_last(ported):
    """A roll along a literal dim of a channels-last tensor runs on that layout: no conversion before it."""
    import inspect

    source = inspect.getsource(ported("channels").keras_module.OpModel.call)
    assert "roll(y, self.s[0], 3)" in source, source


SEQUENCE_MODEL = '''
import torch
import torch.nn as nn


class Shifter(nn.Module):
    """A token mixer that shifts half the features one step along the sequence (as in shift-based MLPs)."""

    def __init__(self, dim=8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.half = dim // 2

    def forward(self, x):
        h = self.proj(x)
        a, b = h[..., :self.half], h[..., self.half:]
        a = torch.roll(a, shifts=1, dims=1)
        b = b.roll(-1, 1)
        return torch.cat([a, b], dim=-1) + torch.roll(x, 3)
'''


@pytest.fixture(scope="module")
def shifter(tmp_path_factory):
    return port(tmp_path_factory.mktemp("shifter"), textwrap.dedent(SEQUENCE_MODEL), input_specs=("5,8",))


@given(batch=st.integers(1, 3), length=st.sampled_from([1, 2, 5, 9]), seed=st.integers(0, 2**16))
def test_roll_sequence_model_end_to_end(shifter, batch, length, seed):
    x = random_input(seed, (batch, length, 8))
    for jit in (False, True):
        assert_same_outputs(shifter, [x], tolerance=1e-5, what=f"shifter jit={jit} x{x.shape}", jit=jit)


torch.set_num_threads(1)
