"""A 1x1 Conv1d over the tokens of a sequence (gMLP's spatial gating unit: `nn.Conv1d(seq_len, seq_len,
kernel_size=1)` on a (batch, tokens, features) tensor) runs on the sequence as it lies: a matmul over axis 1
(porter/passes/pointwise_convs.py; the runtime's `layout="source"`). Before, the sequence went channels-last into
the conv and the gate and residual beside it converted too: 12 Transposes in a two-block gMLP, none now. A conv
that is not 1x1 (kernel 3 over the tokens) still converts, and both match torch eagerly and under XLA."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.passes.pointwise_convs import _pointwise
from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

GMLP = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class SpatialGatingUnit(nn.Module):
    def __init__(self, d_ffn, seq_len):
        super().__init__()
        self.norm = nn.LayerNorm(d_ffn)
        self.spatial_proj = nn.Conv1d(seq_len, seq_len, kernel_size=KERNEL, padding=KERNEL // 2)
        nn.init.constant_(self.spatial_proj.bias, 1.0)

    def forward(self, x):
        u, v = x.chunk(2, dim=-1)
        v = self.norm(v)
        v = self.spatial_proj(v)
        return u * v


class Block(nn.Module):
    def __init__(self, d_model, d_ffn, seq_len):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.channel_proj1 = nn.Linear(d_model, d_ffn * 2)
        self.channel_proj2 = nn.Linear(d_ffn, d_model)
        self.sgu = SpatialGatingUnit(d_ffn, seq_len)

    def forward(self, x):
        residual = x
        x = F.gelu(self.channel_proj1(self.norm(x)))
        x = self.channel_proj2(self.sgu(x))
        return x + residual


class Net(nn.Module):
    def __init__(self, d_model=8, seq_len=6):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(d_model, 12, seq_len) for _ in range(2)])
        self.head = nn.Linear(d_model, 3)

    def forward(self, x):
        return self.head(self.blocks(x).mean(dim=1))
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return cached(lambda kernel: port(tmp_path_factory.mktemp(f"gmlp{kernel}"), GMLP.replace("KERNEL", str(kernel)),
                                      input_specs=("6,8",)))


@settings(max_examples=6, deadline=None)
@given(kernel=st.sampled_from([1, 3]), batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_gated_tokens_match_torch(ported, kernel, batch, seed):
    x = random_input(seed, (batch, 6, 8))
    assert_same_outputs(ported(kernel), [x], tolerance=1e-5, what=f"kernel {kernel}")
    assert_same_outputs(ported(kernel), [x], tolerance=1e-5, what=f"kernel {kernel}, XLA", jit=True)


def test_a_1x1_conv_over_tokens_moves_no_data(ported):
    x = random_input(0, (2, 6, 8))
    assert count_transposes(ported(1).keras_model, [x]) == 0
    assert count_transposes(ported(3).keras_model, [x]) > 0  # (a kernel of 3 convolves the tokens channels-last)


@pytest.mark.parametrize("call, pointwise", [
    ("nn.Conv1d(4, 4, 1)", True), ("nn.Conv1d(4, 4, kernel_size=(1,), stride=1, padding=0)", True),
    ("nn.Conv1d(4, 4, 1, bias=False, dilation=2)", True), ("nn.Conv1d(4, 4, 3)", False),
    ("nn.Conv1d(4, 4, 1, 2)", False), ("nn.Conv1d(4, 4, 1, groups=2)", False), ("nn.Conv1d(4, 4, k)", False),
    ("nn.Conv1d(*args)", False), ("nn.Conv1d(4, 4, 1, padding_mode='reflect')", False),
    ("nn.Conv1d(4, 4, 1, padding=1 // 2)", True), ("nn.Conv1d(4, 4, 3 - 2, padding=3 // 2)", False),
])
def test_pointwise_reads_the_literal_arguments(call, pointwise):
    import libcst as cst

    assert _pointwise(cst.parse_expression(call)) is pointwise
