"""`torch.cat` of a pending permute with tensors in torch's order (HF GPT-2's attention: `key = torch.cat((past_key,
key), dim=-2)` under `if layer_past is not None:`, the key's heads held (B, T, H, D) before their permute): the others
are permuted to the order the pending one is held in and the result is held so.

What was slow before: the cat settled the pending permute, so the key and value left the `if` in torch's order on
one path and held on the other, and the join transposed them on every call (5 Transposes for one attention, 10 for
HF GPT-2's two layers, though no past was handed). Each port matches torch, eagerly and under XLA, with a past of
drawn length handed and without one, and traces no Transpose without one.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import assert_matches_torch, snippet_ports
from tests.rules.op_ports import random_input

SOURCE = '''
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, d=16, heads=4):
        super().__init__()
        self.c_attn = nn.Linear(d, 3 * d)
        self.heads, self.d = heads, d

    def _split_heads(self, t):
        new_shape = t.size()[:-1] + (self.heads, self.d // self.heads)
        return t.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, x, layer_past=None):
        query, key, value = self.c_attn(x).split(self.d, dim=2)
        query, key, value = self._split_heads(query), self._split_heads(key), self._split_heads(value)
        if layer_past is not None:
            past_key, past_value = layer_past
            key = torch.cat((past_key, key), dim=-2)
            value = torch.cat([past_value, value], -2)
        weights = torch.matmul(query, key.transpose(-1, -2)).softmax(-1)
        out = torch.matmul(weights, value).permute(0, 2, 1, 3).contiguous()
        return out.view(out.size()[:-2] + (self.d,))


class Net(nn.Module):
    def __init__(self, memory=2):
        super().__init__()
        self.attn = Attention()
        self.memory = memory
        self.mem = nn.Parameter(torch.randn(1, 4, max(memory, 1), 4))

    def forward(self, x):
        if self.memory == 0:
            return self.attn(x)
        b = x.size(0)
        past = (self.mem.expand(b, -1, -1, -1), self.mem.expand(b, -1, -1, -1) * 2.0)
        return self.attn(x, past) + self.attn(x)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """memory -> output folder of the port built with it."""
    return snippet_ports(tmp_path_factory, SOURCE, "5,16", "memory")


@settings(max_examples=5, deadline=None)
@given(memory=st.sampled_from([0, 1, 3]), batch=st.integers(1, 2), length=st.integers(1, 6),
       seed=st.integers(0, 2**16))
def test_cat_with_a_pending_permute_matches_torch(ported, memory, batch, length, seed):
    assert_matches_torch(ported(memory), seed, (batch, length, 16))


def test_without_a_past_no_transpose_is_traced(ported):
    pair = PortedPair(ported(0), seed=2)
    assert count_transposes(pair.keras_model, [random_input(2, (2, 5, 16))]) == 0
