"""A class called with tensors of another rank than its first caller's (a channel gate a Sequential runs on images
and, elsewhere, on the (N, C, L) sequences a Conv1d makes): the class gets a case of `call` for that rank, chosen at
run time by `len(x.shape)`, taking it in the layout the class declares (containers convert to it). Before, its one
translation reduced the image's channel axis of a rank-3 tensor (a crash, or wrong values when sizes allow).
Compared with torch, eagerly and under XLA, for hypothesis-drawn sizes and batches."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Gate(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x.mean(1, keepdim=True))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = nn.Sequential(Gate(), nn.Conv2d(3, 4, 3, padding=1))
        self.body = nn.Sequential(nn.Conv2d(4, 5, 3, padding=1), Gate(), nn.ReLU())
        self.seq_head = nn.Sequential(nn.Conv1d(5, 6, 1), Gate())

    def forward(self, x):
        return self.seq_head(self.body(self.pre(x)).flatten(2))
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {"gate": SOURCE})


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), height=st.integers(1, 9), width=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_class_called_with_two_ranks_matches_torch(ported, batch, height, width, seed):
    pair = ported("gate")
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
