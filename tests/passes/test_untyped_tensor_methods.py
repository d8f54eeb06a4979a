"""Tensor methods on values porter cannot type: a helper reached through `partial` stored on `self` has untyped
parameters, and `map(named_lambda, (q, k))` untyped items (linear_attention_transformer's `causal_linear_attn`:
`b_k.sum(dim=-2)` was left as written, a TypeError in the port). Any Tensor method no Python built-in type has is a
tensor's; names the imports resolve (`math.floor`) and built-in methods (`xs.index`) stay as written, as does a str
method handed a string literal (`name.lower().split('-')`, which is a Tensor method too)."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

SOURCE = '''
import math
from functools import partial

import torch
import torch.nn as nn


def bucketed(q, k, bucket_size=2, eps=1e-3):
    n = q.shape[-2]
    k = k.exp().clone()
    mask = k > 1.5
    k.masked_fill_(mask, 0.)
    bucket_fn = lambda x: x.reshape(*x.shape[:-2], -1, bucket_size, x.shape[-1])
    b_q, b_k = map(bucket_fn, (q, k))
    b_k_sum = b_k.sum(dim=-2)
    b_k_cumsum = b_k_sum.cumsum(dim=-2)
    scale = math.floor(math.sqrt(n))
    sizes = [1, 2, 3]
    index = sizes.index(2)
    out = torch.einsum('bud,bund->bun', b_k_cumsum, b_q).clamp(min=eps) * scale + index
    return out.flatten(1)


def kind_of(name):
    return name.replace('_', '').lower().split('-')[0]


class Net(nn.Module):
    def __init__(self, dim=6, norm='Batch_Norm-2d'):
        super().__init__()
        self.proj = nn.Linear(dim, 2 * dim)
        self.attn_fn = partial(bucketed, bucket_size=2)
        self.scale = 2.0 if kind_of(norm) == 'batchnorm' else 1.0

    def forward(self, x):
        q, k = self.proj(x).chunk(2, dim=-1)
        return self.attn_fn(q, k) * self.scale
'''


@pytest.fixture(scope="module")
def untyped_port(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(SOURCE), input_specs=("8,6",)))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), length=st.sampled_from([2, 4, 8]), seed=st.integers(0, 2**16))
def test_tensor_methods_on_untyped_values_match_torch(untyped_port, batch, length, seed):
    pair = untyped_port("net")
    assert_same_outputs(pair, [random_input(seed, (batch, length, 6))], tolerance=1e-5, what="untyped methods")


def test_untyped_values_get_tensor_methods_only(untyped_port):
    pair = untyped_port("net")
    text = pair.keras_module.__loader__.get_source(pair.keras_module.__name__).split("def load_state_dict")[0]
    assert ".sum(dim" not in text and ".masked_fill_(" not in text and ".cumsum(" not in text
    assert "math.floor(math.sqrt(n))" in text and "sizes.index(2)" in text
    assert '.lower().split("-")[0]' in text  # (a string's split: timm's `get_norm_act_layer`)
    x = random_input(0, (2, 8, 6))
    assert_same_outputs(pair, [x], tolerance=1e-5, what="under XLA", jit=True)
    pair.build()
    assert count_transposes(pair.keras_model, [x]) == 0
