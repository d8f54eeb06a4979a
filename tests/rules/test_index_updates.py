"""Property tests of the index-update rules (`index_add`, `index_copy`, `index_fill`, their in-place spellings;
porter/rules/selection_ops.py) and `Tensor.new_tensor` against real torch, along every dim (negative too), with
repeated indices accumulating, on drawn sizes including batch 1. kaituoxu's Conv-TasNet decoder adds overlapping
frames with `result.index_add_(-2, frame, subframes)` after `signal.new_tensor(frame).long()`: it ports and matches."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, n=6):
        super().__init__()
        self.mix = nn.Linear(n, n)

    def forward(self, x):  # (B, T, n)
        y = self.mix(x)
        length = y.shape[1]
        rows = torch.arange(length).flip(0)
        added = torch.zeros_like(y).index_add(1, rows, y)
        twice = torch.zeros_like(y[:, :1]).index_add(1, torch.zeros(length, dtype=torch.long), y, alpha=0.5)
        last = y.clone()
        last.index_add_(-1, torch.tensor([0, 2, 0]), y[..., :3])
        copied = torch.index_copy(y, 0, torch.arange(y.shape[0]).flip(0), x)
        filled = y.index_fill(2, torch.tensor([1, 3]), -1.5)
        filled.index_fill_(1, torch.tensor([0]), 2.0)
        ids = y.new_tensor([[1, 2], [3, 4]])
        ints = x.new_tensor(rows).long() + 1
        return added, twice, last, copied, filled, ids * 2, ints.float()
'''

OVERLAP_ADD = '''
import math

import torch
import torch.nn as nn


def overlap_and_add(signal, frame_step):
    outer_dimensions = signal.size()[:-2]
    frames, frame_length = signal.size()[-2:]
    subframe_length = math.gcd(frame_length, frame_step)
    subframe_step = frame_step // subframe_length
    subframes_per_frame = frame_length // subframe_length
    output_size = frame_step * (frames - 1) + frame_length
    output_subframes = output_size // subframe_length
    subframe_signal = signal.view(*outer_dimensions, -1, subframe_length)
    frame = torch.arange(0, output_subframes).unfold(0, subframes_per_frame, subframe_step)
    frame = signal.new_tensor(frame).long()
    frame = frame.contiguous().view(-1)
    result = signal.new_zeros(*outer_dimensions, output_subframes, subframe_length)
    result.index_add_(-2, frame, subframe_signal)
    result = result.view(*outer_dimensions, -1)
    return result


class OpModel(nn.Module):
    def __init__(self, n=8, L=8):
        super().__init__()
        self.L = L
        self.basis_signals = nn.Linear(n, L, bias=False)

    def forward(self, x):  # (B, C, K, N): frames of each speaker's masked representation
        return overlap_and_add(self.basis_signals(x), self.L // 2)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("index_updates"), textwrap.dedent(SOURCE), input_specs=("5,6",))


@pytest.fixture(scope="module")
def overlap_add(tmp_path_factory):
    return port(tmp_path_factory.mktemp("overlap_add"), textwrap.dedent(OVERLAP_ADD), input_specs=("2,5,8",))


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), length=st.sampled_from([1, 4, 7]))
def test_index_updates_match_torch(pair, seed, batch, length):
    assert_same_outputs(pair, [random_input(seed, (batch, length, 6))])


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), speakers=st.integers(1, 2), frames=st.sampled_from([1, 3, 6]))
def test_overlap_and_add_matches_torch(overlap_add, seed, batch, speakers, frames):
    assert_same_outputs(overlap_add, [random_input(seed, (batch, speakers, frames, 8))])
