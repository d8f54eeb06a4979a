"""A module-level function a constructor takes as its parameter's default (MaxViT's `partition_function=
window_partition`, kept as `self.fn` and called `self.fn(x, 2)`) while the model also calls it directly on a
channels-last image: the direct call fixed the function to channels-last, and `call_module(self.fn, ...)` handed it
torch's layout (a silent mismatch, max error 2.8). Such a function is now handed (frontend/handed_functions.py): it
keeps torch's layout under its own name and the direct caller takes a variant. The port matches torch."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


def window_partition(x, ws=2):
    B, C, H, W = x.shape
    x = x.view(B, C, H // ws, ws, W // ws, ws)
    return x.permute(0, 2, 4, 3, 5, 1).contiguous().view(-1, ws, ws, C)


class OpModel(nn.Module):
    def __init__(self, fn=window_partition):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fn = fn
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        x = self.conv(x)
        C = x.shape[1]
        a = self.fn(x, 2).view(-1, 4, C)
        b = window_partition(x, 2).view(-1, 4, C)
        return self.fc(a) + b
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("handed_default"), textwrap.dedent(SOURCE), input_specs=("3,8,8",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.sampled_from([2, 4, 6]),
       width=st.sampled_from([2, 8]))
def test_port_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])
