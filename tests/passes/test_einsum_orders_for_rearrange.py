"""An einsum whose result einops rearranges next (gMLP's spatial gating: `gate = einsum('b h n d, h m n -> b h m
d', gate, self.weight)`, then `rearrange(gate, 'b h n d -> b n (h d)')`): the einsum was written in torch's order
and the rearrange moved its heads (a Transpose). The einsum is now written in the order the rearrange reads its
axes in (passes/order_wanted.py), so the rearrange only merges them: no Transpose. Matches torch."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
from einops import rearrange
from torch import einsum, nn


class OpModel(nn.Module):
    def __init__(self, dim=16, seq=6, heads=4):
        super().__init__()
        self.heads = heads
        self.weight = nn.Parameter(torch.randn(heads, seq, seq) * 0.1)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        gate = rearrange(self.proj(x), "b n (h d) -> b h n d", h=self.heads)
        gate = einsum("b h n d, h m n -> b h m d", gate, self.weight)
        return rearrange(gate, "b h n d -> b n (h d)") * x
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("einsum_for_rearrange"), textwrap.dedent(SOURCE), input_specs=("6,16",))


def test_the_heads_move_nothing(pair):
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 6, 16))) == 0  # (was 1)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3))
def test_port_matches_torch(pair, seed, batch):
    assert_same_outputs(pair, [random_input(seed, (batch, 6, 16))])
