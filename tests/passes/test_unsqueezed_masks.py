"""A (nW, N, N) attention mask given size-1 dims (`mask.unsqueeze(1).unsqueeze(0)`, Swin's shifted windows) meets
attention scores viewed 5-d in torch's order: the mask's unsqueezed axis is stored where it costs nothing (a 3-d
map given a channel axis is held channels-last, for the convolutions that usually follow), and the scores were
transposed to the mask's order and back (2 Transposes per block where the source asks for none). Operands held out
of torch's order by size-1 dims only are now brought to the other operands' order (a reshape). Matches torch for
drawn windows, heads and tokens; no Transpose traced."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, dim=16, num_heads=4, n=8, n_windows=2):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.register_buffer("attn_mask", torch.randn(n_windows, n, n))

    def forward(self, x):
        B_, N, C = x.shape
        qkv = self.qkv(x).reshape(B_, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = q @ k.transpose(-2, -1)
        nW = self.attn_mask.shape[0]
        attn = attn.view(B_ // nW, nW, self.num_heads, N, N) + self.attn_mask.unsqueeze(1).unsqueeze(0)
        attn = attn.view(-1, self.num_heads, N, N)
        attn = attn.softmax(dim=-1)
        return (attn @ v).transpose(1, 2).reshape(B_, N, C)
'''

CASES = {"windows2_heads4": {"num_heads": 4, "n": 8, "n_windows": 2},
         "windows3_heads2_odd": {"num_heads": 2, "n": 5, "n_windows": 3}}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request, tmp_path_factory):
    args = CASES[request.param]
    pair = port(tmp_path_factory.mktemp("mask"), SOURCE, input_specs=(f"{args['n']},16",), init_args=args)
    return pair, args


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), groups=st.integers(1, 2))
def test_masked_window_attention_matches_torch(case, seed, groups):
    pair, args = case
    x = random_input(seed, (groups * args["n_windows"], args["n"], 16))
    assert_same_outputs(pair, [x])


def test_masked_window_attention_traces_no_transpose(case):
    pair, args = case
    x = random_input(0, (2 * args["n_windows"], args["n"], 16))
    assert_same_outputs(pair, [x], jit=True)
    assert count_transposes(pair.keras_model, [x]) == 0
