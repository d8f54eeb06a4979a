"""einops `rearrange` with its reorder left pending (porter/rules/einops_pending.py): heads split with
`b n (h d) -> b h n d` feed `torch.matmul`, `torch.einsum` and `einops.einsum` in place and the head merge
`b h n d -> b n (h d)` re-emits the einsum in the order it needs, so a lucidrains-style attention traces no
Transpose (an einsum of named operands: one of an inline expression is not re-emitted); patterns that need a
real transpose (`b h n d -> b n (d h)`) still match; an einsum operand of a rank porter cannot see (gMLP's
`torch.ones(weight.shape[-2:])`) takes its rank from the equation. Inputs drawn by hypothesis."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

pytest.importorskip("einops")

ATTENTION = '''
import torch
from torch import nn
import einops
from einops import rearrange


class Attention(nn.Module):
    def __init__(self, dim=12, heads=3):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=self.heads), qkv)
        {body}
        return self.to_out(out)
'''
BODIES = {
    "matmul": ("dots = torch.matmul(q, k.transpose(-1, -2)) * 0.5\\n"
               "        attn = dots.softmax(dim=-1)\\n"
               "        out = rearrange(torch.matmul(attn, v), 'b h n d -> b n (h d)')", 0),
    "torch_einsum": ("dots = torch.einsum('b h i d, b h j d -> b h i j', q, k)\\n"
                     "        attn = dots.softmax(dim=-1)\\n"
                     "        out = torch.einsum('b h i j, b h j d -> b h i d', attn, v)\\n"
                     "        out = rearrange(out, 'b h n d -> b n (h d)')", 0),
    "einops_einsum": ("dots = einops.einsum(q, k, 'b h i d, b h j d -> b h i j')\\n"
                      "        attn = dots.softmax(dim=-1)\\n"
                      "        out = einops.einsum(attn, v, 'b h i j, b h j d -> b h i d')\\n"
                      "        out = rearrange(out, 'b h n d -> b n (h d)')", 0),
    "einsum_operand_of_unknown_rank": ("mix = torch.ones(q.shape[-2:-1] * 2).triu() * 0.5\\n"
                                       "        out = torch.einsum('b h n d, m n -> b h m d', q, mix)\\n"
                                       "        out = rearrange(out, 'b h n d -> b n (h d)')", 0),
    "merge_other_order": ("out = rearrange(q * k + v, 'b h n d -> b n (d h)')", 2),
    "split_merge_back": ("out = rearrange(q + k, 'b h n d -> b n (h d)') + rearrange(v, 'b h n d -> b n (h d)')",
                         0),
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(ATTENTION).replace(
        "{body}", BODIES[name][0].replace("\\n", "\n")), input_specs=("5,12",)))


@pytest.mark.parametrize("name", sorted(BODIES))
@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_pending_rearrange_matches_torch(ported, name, batch, seed):
    assert_same_outputs(ported(name), [random_input(seed, (batch, 5, 12))], tolerance=1e-5, what=name)


@pytest.mark.parametrize("name", sorted(BODIES))
def test_pending_rearrange_traces_no_transpose_it_can_avoid(ported, name):
    pair = ported(name)
    x = random_input(0, (2, 5, 12))
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} under XLA", jit=True)
    assert count_transposes(pair.keras_model, [x]) <= BODIES[name][1]


EINSUM_INTO_METHOD = '''
import torch
from torch import nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def _merge_heads(self, t):
        return t.transpose(1, 2).reshape(t.shape[0], t.shape[2], -1)

    def forward(self, x):
        q, k, v = self.qkv(x).view(x.shape[0], x.shape[1], 2, 12).permute(0, 2, 1, 3).chunk(3, dim=-1)
        attn = torch.einsum("bhid,bhjd->bhij", q, k).softmax(dim=-1)
        return self._merge_heads(torch.einsum("bhij,bhjd->bhid", attn, v))
'''


@pytest.fixture(scope="module")
def einsum_into_method(tmp_path_factory):
    return port(tmp_path_factory.mktemp("einsum_into_method"), EINSUM_INTO_METHOD, input_specs=("5,8",))


@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 3), tokens=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_an_einsum_handed_to_a_method_is_not_re_emitted_there(einsum_into_method, batch, tokens, seed):
    """timm's EfficientNet attention computes an einsum and hands it to `_reshape_output(t)`, which transposes it:
    the pending einsum was re-emitted inside the method with the caller's operand names (`attn`, `v` undefined:
    exit 3). A parameter carries no caller's recipe; the method transposes what it is given."""
    assert_same_outputs(einsum_into_method, [random_input(seed, (batch, tokens, 8))], jit=True)
