"""Variables an `if`/`else` binds in two layouts and no later code reads (LeViT's attention: `q, k, v` taken
`view(...).permute(...)` on one path, `view(...).split(...)` on the other, each consumed inside its own branch) are
converted at the join on neither path (passes/statements.py `live_after`): LeViT traced 33 Transposes, 22 now. A
variable read after the join, or on a later turn of a loop, is still converted to one layout. Compared with real
torch on hypothesis-drawn inputs, both branches taken."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, use_conv=False, heads=2):
        super().__init__()
        self.use_conv, self.heads = use_conv, heads
        self.qkv = nn.Linear(8, 24)

    def forward(self, x):
        B, N, C = x.shape
        if self.use_conv:
            q, k, v = self.qkv(x).view(B, N, 3, self.heads, -1).unbind(2)
            attn = torch.einsum("bnhd,bmhd->bhnm", q, k).softmax(-1)
            x = torch.einsum("bhnm,bmhd->bnhd", attn, v).reshape(B, N, -1)
        else:
            q, k, v = self.qkv(x).view(B, N, self.heads, -1).permute(0, 2, 1, 3).chunk(3, dim=-1)
            attn = (q @ k.transpose(-2, -1)).softmax(-1)
            x = (attn @ v).transpose(1, 2).reshape(B, N, -1)
        y = x
        for i in range(2):
            if i == 0:
                t = x.transpose(1, 2)
            else:
                t = t.transpose(1, 2) + x  # (read on the next turn: converted at the join)
        return y + t
'''


@pytest.fixture(scope="module", params=[False, True], ids=["permute_branch", "einsum_branch"])
def pair(request, tmp_path_factory):
    return port(tmp_path_factory.mktemp("dead_at_join"), textwrap.dedent(SOURCE), input_specs=("5,8",),
                init_args={"use_conv": request.param})


def test_values_dead_after_the_join_are_not_converted(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    after_join = code.split("y = x", 1)[1]
    assert "q = " not in after_join and "v = " not in after_join
    assert "k = " not in code.split("else:", 1)[1].split("y = x", 1)[0].split("attn = ", 1)[1].split("\n", 2)[2]


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), tokens=st.integers(1, 6))
def test_port_matches_torch(pair, seed, batch, tokens):
    assert_same_outputs(pair, [random_input(seed, (batch, tokens, 8))])


def test_no_transpose_is_left_for_dead_values(pair):
    assert count_transposes(pair.keras_model, [random_input(0, (2, 5, 8))]) <= 2  # (the loop's own transposes)
