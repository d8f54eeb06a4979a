"""Multi-head self-attention over a conv's output (BoTNet's MHSA: `q = self.query(x).view(n, heads, C // heads,
-1)`, `torch.matmul(q.permute(0, 1, 3, 2), k)`, `torch.matmul(v, attention.permute(0, 1, 3, 2)).view(n, C, h,
w)`): the heads' view converted each of q, k and v to torch's order and the output back (4 Transposes a block).
The view now splits the channels held last into (heads, C // heads) and merges the positions before them, and an
einsum written in place gives its (N, heads, d, L) result as (N, L, heads, d), which the view to the image splits
channels-last: the block converts nothing. Matches torch for drawn sizes (non-square, batch 1)."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, c=16, heads=2):
        super().__init__()
        self.heads = heads
        self.stem = nn.Conv2d(3, c, 3, 2, 1)
        self.qkv = nn.Conv2d(c, 3 * c, 1)
        self.head = nn.Conv2d(c, 5, 1)

    def forward(self, x):
        x = self.stem(x)
        b, C, h, w = x.size()
        q, k, v = self.qkv(x).chunk(3, dim=1)
        q = q.view(b, self.heads, C // self.heads, -1)
        k = k.view(b, self.heads, C // self.heads, -1)
        v = v.view(b, self.heads, C // self.heads, -1)
        attn = torch.matmul(q.permute(0, 1, 3, 2), k).softmax(-1)
        out = torch.matmul(v, attn.permute(0, 1, 3, 2)).view(b, C, h, w)
        return self.head(out + x)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("conv_attention_heads"), textwrap.dedent(SOURCE), input_specs=("3,16,12",))


def test_the_attention_converts_nothing(pair):
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 16, 12))) == 2  # (was 6)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), height=st.integers(4, 13), width=st.integers(4, 13))
def test_port_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))], tolerance=1e-4)
