"""Property tests of the `F.multi_head_attention_forward` rule (porter/rules/attention.py, runtime
`multi_head_attention_forward`) against real torch: CLIP's AttentionPool2d (three Linears' weights handed as separate
projections, their biases concatenated, the class token attending to an image's positions), and a packed
`in_proj_weight` with `bias_k`/`bias_v`, `add_zero_attn`, a key padding mask, an attention mask and the per-head
weights, on sequence-first inputs of drawn lengths, widths and batches (batch 1 included)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

ATTENTION_POOL = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self, spacial_dim=4, embed_dim=8, num_heads=2, output_dim=6):
        super().__init__()
        self.stem = nn.Conv2d(3, embed_dim, 3, padding=1)
        self.positional_embedding = nn.Parameter(torch.randn(spacial_dim ** 2 + 1, embed_dim) / embed_dim ** 0.5)
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.c_proj = nn.Linear(embed_dim, output_dim or embed_dim)
        self.num_heads = num_heads

    def forward(self, x):
        x = self.stem(x)
        x = x.flatten(start_dim=2).permute(2, 0, 1)  # NCHW -> (HW)NC
        x = torch.cat([x.mean(dim=0, keepdim=True), x], dim=0)  # (HW+1)NC
        x = x + self.positional_embedding[:, None, :].to(x.dtype)  # (HW+1)NC
        x, _ = F.multi_head_attention_forward(
            query=x[:1], key=x, value=x, embed_dim_to_check=x.shape[-1], num_heads=self.num_heads,
            q_proj_weight=self.q_proj.weight, k_proj_weight=self.k_proj.weight, v_proj_weight=self.v_proj.weight,
            in_proj_weight=None, in_proj_bias=torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias]),
            bias_k=None, bias_v=None, add_zero_attn=False, dropout_p=0, out_proj_weight=self.c_proj.weight,
            out_proj_bias=self.c_proj.bias, use_separate_proj_weight=True, training=self.training,
            need_weights=False)
        return x.squeeze(0)
'''

PACKED = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self, embed=8, heads=4):
        super().__init__()
        self.heads = heads
        self.in_proj_weight = nn.Parameter(torch.randn(3 * embed, embed) / embed ** 0.5)
        self.in_proj_bias = nn.Parameter(torch.randn(3 * embed) * 0.1)
        self.bias_k = nn.Parameter(torch.randn(1, 1, embed))
        self.bias_v = nn.Parameter(torch.randn(1, 1, embed))
        self.out = nn.Linear(embed, embed)

    def forward(self, x):
        L, N, E = x.shape
        padding = torch.arange(L)[None, :] >= L - 1 - torch.arange(N)[:, None]
        causal = torch.triu(torch.full((L, L + 2), float("-inf")), diagonal=1)
        out, weights = F.multi_head_attention_forward(
            x, x, x, E, self.heads, self.in_proj_weight, self.in_proj_bias, self.bias_k, self.bias_v, True, 0.0,
            self.out.weight, self.out.bias, training=False, key_padding_mask=padding.float() * -1e4,
            need_weights=True, attn_mask=causal[:, :L], average_attn_weights=False)
        return out, weights
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    sources = {"attention_pool": (ATTENTION_POOL, ("3,4,4",)), "packed": (PACKED, ("2,8",))}
    return cached(lambda name: port(tmp_path_factory.mktemp(name), sources[name][0], sources[name][1]))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_clip_attention_pool_matches_torch(ported, batch, seed):
    pair = ported("attention_pool")
    x = random_input(seed, (batch, 3, 4, 4))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)


@settings(max_examples=6, deadline=None)
@given(length=st.integers(1, 5), batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_packed_projection_with_bias_kv_zero_attn_and_masks_matches_torch(ported, length, batch, seed):
    pair = ported("packed")
    x = random_input(seed, (length, batch, 8))
    assert_same_outputs(pair, [x], tolerance=1e-5)
