"""A function handed attention heads pending (`lin(x).view(b, -1, h, d).transpose(1, 2)`, the Annotated
Transformer's `attention(query, key, value, mask, dropout)`) returns its context einsum in the order the heads were
handed, so its caller's `x.transpose(1, 2)` merging the heads moves no data; the mask, unsqueezed only `if mask is
not None` (its rank unknown after the if), leaves the scores their rank, so the second matmul is an einsum too; the
`nn.Dropout` handed in as a callable keeps the tensor's rank and layout. 4 Transposes before (2 a layer), none now;
the port matches torch eagerly and under XLA for any batch, length and padding."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port

SOURCE = '''
import math

import torch
import torch.nn as nn


def attention(query, key, value, mask=None, dropout=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


class Heads(nn.Module):
    def __init__(self, h, d_model):
        super().__init__()
        self.d_k = d_model // h
        self.h = h
        self.linears = nn.ModuleList([nn.Linear(d_model, d_model) for _ in range(4)])
        self.dropout = nn.Dropout(0.1)

    def forward(self, query, key, value, mask=None):
        if mask is not None:
            mask = mask.unsqueeze(1)
        nbatches = query.size(0)
        query, key, value = [lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
                             for lin, x in zip(self.linears, (query, key, value))]
        x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)
        x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        return self.linears[-1](x)


class Encoder(nn.Module):
    def __init__(self, vocab=20, d_model=8, h=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.first = Heads(h, d_model)
        self.second = Heads(h, d_model)

    def forward(self, ids):
        mask = (ids != 0).unsqueeze(-2)
        x = self.embed(ids)
        x = x + self.first(x, x, x, mask)
        return x + self.second(x, x, x, mask)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("handed_heads"), SOURCE, input_specs=("7:int64:0:20",))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_attention_handed_pending_heads_matches_torch(pair, batch, length, seed):
    ids = np.random.default_rng(seed).integers(0, 20, (batch, length))
    ids[:, 0] = 1  # (a row of padding only: torch and TF both average it, but over -1e9s: not a test of the port)
    assert_same_outputs(pair, [ids], tolerance=1e-5)
    assert_same_outputs(pair, [ids], tolerance=1e-5, jit=True)


def test_attention_handed_pending_heads_traces_no_transpose(pair):
    ids = np.random.default_rng(0).integers(0, 20, (2, 7))
    assert count_transposes(pair.keras_model, [ids]) == 0


def test_context_is_returned_in_the_heads_order(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert '->aibj"' in code and "permute_axes" not in code
