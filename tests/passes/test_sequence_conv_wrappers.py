"""A block wrapping a Conv1d for (B, T, C) sequences (FastSpeech2's `Conv`: `x = x.contiguous().transpose(1, 2)`,
the conv, and back), fed a sequence: the swap before the conv was not seen through `.contiguous()`, so the block
was taken to want channels-last images and its caller converted the sequence into one (7 Transposes in a
FastSpeech2 variance predictor, 2 for the block alone, 0 needed). A sequence model keeps none. Matches torch for
drawn lengths (1 and odd ones) and batches."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Conv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=1, padding=0):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size=kernel_size, padding=padding)

    def forward(self, x):
        x = x.contiguous().transpose(1, 2)
        x = self.conv(x)
        x = x.contiguous().transpose(1, 2)
        return x


class OpModel(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.conv1 = Conv(dim, dim, 3, 1)
        self.norm1 = nn.LayerNorm(dim)
        self.conv2 = Conv(dim, dim, 3, 1)
        self.linear_layer = nn.Linear(dim, 1)

    def forward(self, x):
        x = self.norm1(torch.relu(self.conv1(x)))
        return self.linear_layer(torch.relu(self.conv2(x))).squeeze(-1)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("conv_wrapper"), textwrap.dedent(SOURCE), input_specs=("9,8",))


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), length=st.sampled_from([1, 4, 9]))
def test_sequence_conv_wrapper_matches_torch(pair, seed, batch, length):
    assert_same_outputs(pair, [random_input(seed, (batch, length, 8))])


def test_sequence_conv_wrapper_traces_no_transpose(pair):
    x = random_input(0, (2, 9, 8))
    assert_same_outputs(pair, [x], jit=True)
    assert count_transposes(pair.keras_model, [x]) == 0
