"""Informer's ProbSparse attention pieces: `_prob_QK`'s `torch.matmul(q.unsqueeze(-2), k_sample.unsqueeze(-3)
.transpose(-2, -1))`, whose batch dims broadcast (L against 1) after an index-tensor gather, and `_update_context`'s
`context[torch.arange(B)[:, None], index, :] = ...` through a topk index. The plain `unsqueeze` did not mark its new
dim as size 1, so the matmul was written as one einsum over dims that do not match (a crash at call); the item
assignment computed its positions on the host with numpy, which a traced call cannot (a crash under XLA). The
unsqueezed dim is now known to have size 1 (a tf.matmul broadcasts it), and positions picked at run time are
indexed as tensors and scattered once. Matches torch eagerly and under XLA for drawn sizes."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, d=16, h=2, top=3):
        super().__init__()
        self.h, self.top = h, top
        self.qk = nn.Linear(d, 2 * d)

    def forward(self, x):
        B, L, C = x.shape
        q, k = self.qk(x).view(B, L, 2, self.h, -1).unbind(2)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        index_sample = torch.arange(0, L, 2)
        k_sample = k[:, :, index_sample, :]
        qk = torch.matmul(q.unsqueeze(-2), k_sample.unsqueeze(-3).transpose(-2, -1)).squeeze(-2)
        measure = qk.max(-1)[0] - qk.sum(-1) / L
        scores = measure.sum(1)
        index = scores.topk(self.top, sorted=False)[1]
        context = x.mean(1, keepdim=True).expand(B, L, C).clone()
        context[torch.arange(B)[:, None], index, :] = x[torch.arange(B)[:, None], index, :] * 2.0
        return context + measure.mean(1, keepdim=True).transpose(1, 2)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("probsparse"), textwrap.dedent(SOURCE), input_specs=("8,16",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), length=st.integers(4, 11))
def test_port_matches_torch(pair, seed, batch, length):
    x = random_input(seed, (batch, length, 16))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
