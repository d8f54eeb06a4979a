"""A lambda bound to a name and mapped over tensors (Linformer's `merge_key_values = lambda t: t.reshape(b, k, h,
-1).transpose(1, 2)`, `keys, values = map(merge_key_values, (keys, values))`): only a lambda written in place was
translated for the items, so the named one moved every head into torch's order and the einsums after it moved them
back (4 Transposes an attention). The named lambda is now written out in the map for the items' layouts (the head
split stays a pending transpose the einsums read as it lies) and its unread binding is removed with a note."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
from torch import nn


class OpModel(nn.Module):
    def __init__(self, dim=16, heads=4):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        h = self.heads
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q = q.reshape(b, n, h, -1).transpose(1, 2)
        merge = lambda t: t.reshape(b, n, h, -1).transpose(1, 2)
        k, v = map(merge, (k, v))
        attn = torch.einsum("bhnd,bhkd->bhnk", q, k).softmax(dim=-1)
        out = torch.einsum("bhnk,bhkd->bhnd", attn, v)
        return self.to_out(out.transpose(1, 2).reshape(b, n, -1))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("mapped_lambdas"), textwrap.dedent(SOURCE), input_specs=("9,16",))


def test_the_heads_move_nothing(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "# porter: `merge` is written out where it is called" in code and "merge = " not in code
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 9, 16))) == 0  # (was 4)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), length=st.integers(1, 12))
def test_port_matches_torch(pair, seed, batch, length):
    assert_same_outputs(pair, [random_input(seed, (batch, length, 16))])
