"""Helpers lucidrains' packages wrap around their modules (x-transformers): `maybe(rearrange)(t, pattern, h=h)`
hands einops' function to a decorator as a value (a raising stub: "einops.rearrange is not supported yet"), and
`eval_decorator`'s `inner(self, *args)` reads `self.training` in a module-level function (written as the bare
`training` of a module's call: an undefined name, exit 3). The function is now the runtime's, taking tensors in
torch's order as einops does, and `self.training` there is the module's mode flag. The port matches torch."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
from functools import wraps

import torch
import torch.nn as nn
from einops import rearrange


def exists(v):
    return v is not None


def maybe(fn):
    @wraps(fn)
    def inner(x, *args, **kwargs):
        if not exists(x):
            return x
        return fn(x, *args, **kwargs)
    return inner


def eval_decorator(fn):
    def inner(self, *args, **kwargs):
        was_training = self.training
        self.eval()
        out = fn(self, *args, **kwargs)
        self.train(was_training)
        return out
    return inner


class OpModel(nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x, context=None):
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: maybe(rearrange)(t, 'b n (h d) -> b h n d', h=self.heads), (q, k, v))
        c = maybe(rearrange)(context, 'b n (h d) -> b h n d', h=self.heads)
        if exists(c):
            k = k + c
        attn = (q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5).softmax(dim=-1)
        out = rearrange(attn @ v, 'b h n d -> b n (h d)')
        return self.to_out(out)

    @torch.no_grad()
    @eval_decorator
    def generate(self, x):
        return self(x)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("package_helpers"), textwrap.dedent(SOURCE), input_specs=("5,16",))


def test_helpers_read_the_runtime_function_and_the_mode_flag(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "maybe(einops_rearrange)(t, " in code and "not_supported" not in code
    assert "was_training = self.training" in code


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), length=st.sampled_from([1, 4, 7]))
def test_port_matches_torch(pair, seed, batch, length):
    assert_same_outputs(pair, [random_input(seed, (batch, length, 16))])
