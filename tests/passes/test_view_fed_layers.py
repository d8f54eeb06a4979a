"""A layer taking what a view made does not say how the forward's parameter is laid out (RetNet's
MultiScaleRetention: heads computed from X by `X @ W_Q` into a list, `torch.cat(Y, dim=2)`, then
`self.group_norm(Y.reshape(-1, self.hidden_size))`): with nothing else deciding, the first layer the forward calls
at all, the GroupNorm, made the (B, T, C) sequence a channels-last image (28 Transposes in a two-layer RetNet). A
layer whose input is a view, reshape or flatten is now passed over there: the sequence stays as it is, with no
Transpose."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class SimpleRetention(nn.Module):
    def __init__(self, hidden_size, head_size):
        super().__init__()
        self.W_Q = nn.Parameter(torch.randn(hidden_size, head_size) / hidden_size)

    def forward(self, X):
        return X @ self.W_Q


class MultiScaleRetention(nn.Module):
    def __init__(self, hidden_size, heads):
        super().__init__()
        self.hidden_size = hidden_size
        self.heads = heads
        self.group_norm = nn.GroupNorm(heads, hidden_size)
        self.retentions = nn.ModuleList([SimpleRetention(hidden_size, hidden_size // heads) for _ in range(heads)])

    def forward(self, X):
        Y = []
        for i in range(self.heads):
            Y.append(self.retentions[i](X))
        Y = torch.cat(Y, dim=2)
        Y_shape = Y.shape
        return self.group_norm(Y.reshape(-1, self.hidden_size)).reshape(Y_shape)


class OpModel(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.msr = nn.ModuleList([MultiScaleRetention(dim, 4) for _ in range(2)])

    def forward(self, X):
        for layer in self.msr:
            X = layer(self.ln(X)) + X
        return X
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("view_fed_layers"), textwrap.dedent(SOURCE), input_specs=("11,16",))


def test_the_sequence_moves_nothing(pair):
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 11, 16))) == 0


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), length=st.integers(1, 13))
def test_port_matches_torch(pair, seed, batch, length):
    assert_same_outputs(pair, [random_input(seed, (batch, length, 16))])
