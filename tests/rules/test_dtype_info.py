"""`torch.finfo` / `torch.iinfo` (porter/rules/dtype_info.py, runtime porter/runtime/dtype_info.py): the port's
limits equal torch's for every dtype drawn, and a ported attention mask built from `-torch.finfo(dots.dtype).max`
(vit-pytorch's LSA) matches torch."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]


@settings(max_examples=20, deadline=None)
@given(name=st.sampled_from(FLOATS))
def test_finfo_matches_torch(name):
    import tensorflow as tf
    import torch

    from porter.runtime.dtype_info import finfo

    got, want = finfo(getattr(tf, name)), torch.finfo(getattr(torch, name))
    for attribute in ("bits", "max", "min", "eps", "tiny", "resolution", "smallest_normal"):
        assert getattr(got, attribute) == getattr(want, attribute), attribute


def test_finfo_defaults_to_float32():
    import torch

    from porter.runtime.dtype_info import finfo

    assert finfo().max == torch.finfo().max


@settings(max_examples=20, deadline=None)
@given(name=st.sampled_from(INTS))
def test_iinfo_matches_torch(name):
    import tensorflow as tf
    import torch

    from porter.runtime.dtype_info import iinfo

    got, want = iinfo(getattr(tf, name)), torch.iinfo(getattr(torch, name))
    assert (got.bits, got.max, got.min) == (want.bits, want.max, want.min)


MASKED = '''
import torch
import torch.nn as nn


class Masked(nn.Module):
    def __init__(self, n=5):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        dots = self.proj(x) @ x.transpose(-1, -2)
        mask = torch.eye(dots.shape[-1], dtype=torch.bool)
        dots = dots.masked_fill(mask, -torch.finfo(dots.dtype).max)
        return dots.softmax(dim=-1)
'''


@pytest.fixture(scope="module")
def masked(tmp_path_factory):
    return port(tmp_path_factory.mktemp("finfo"), textwrap.dedent(MASKED), input_specs=("5,4",))


@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_finfo_mask_matches_torch(masked, batch, seed):
    assert_same_outputs(masked, [random_input(seed, (batch, 5, 4))], tolerance=1e-5, what="finfo mask")
    assert_same_outputs(masked, [random_input(seed, (batch, 5, 4))], tolerance=1e-5, what="finfo mask, XLA",
                        jit=True)
