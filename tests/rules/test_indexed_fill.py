"""In-place fills of part of a tensor (`self.qkv.bias[n:2 * n].data.zero_()` as torchvision's Swin V2 writes it,
`self.scale[0].fill_(2.0)` under no_grad, `bias[n:2 * n].zero_()` and `bias[:2].copy_(...)` on a local clone in
forward): item assignments in the port, the Keras variables filled in place at construction; matches torch."""

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

MODEL = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attn(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        length = self.qkv.bias.numel() // 3
        self.qkv.bias[length:2 * length].data.zero_()
        self.scale = nn.Parameter(torch.ones(dim))
        with torch.no_grad():
            self.scale[0].fill_(2.0)

    def forward(self, x):
        bias = self.qkv.bias.clone()
        n = bias.numel() // 3
        bias[n:2 * n].zero_()
        bias[:2].copy_(torch.ones(2))
        return F.linear(x, self.qkv.weight, bias)[..., :6] * self.scale
'''


@pytest.fixture(scope="module")
def attn(tmp_path_factory):
    return port(tmp_path_factory.mktemp("fill"), textwrap.dedent(MODEL), input_specs=("4,6",))


@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_indexed_fills_match_torch(attn, batch, seed):
    assert_same_outputs(attn, [random_input(seed, (batch, 4, 6))], tolerance=1e-6, what="indexed fills")


def test_construction_fills_the_variables_in_place(attn):
    fresh = attn.keras_module.Attn()
    bias = np.asarray(fresh.qkv.bias)
    assert np.all(bias[6:12] == 0.0) and np.any(bias[:6] != 0.0)
    assert float(np.asarray(fresh.scale)[0]) == 2.0 and np.all(np.asarray(fresh.scale)[1:] == 1.0)
    assert fresh.qkv.bias is fresh.qkv.trainable_variables[-1] or any(
        v is fresh.qkv.bias for v in fresh.trainable_variables)  # still the variable the optimizer holds


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_indexed_fills_compile_under_xla(attn, batch, seed):
    """`n = bias.numel() // 3` stays a Python int under tf.function, so `bias[n:2 * n]` slices statically."""
    assert_same_outputs(attn, [random_input(seed, (batch, 4, 6))], tolerance=1e-6, what="indexed fills", jit=True)
