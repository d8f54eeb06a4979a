"""A module with a property and its setter (pytorch-tcn's `TemporalConv1d.buffer`): both methods have one name, the
setter replaced the getter, and the port kept `@buffer.setter` over an undefined `buffer` (an internal error, nothing
written). The getter is the method; the port converts and matches torch on drawn inputs."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
from torch import nn


class Pad(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.register_buffer("buffer", torch.zeros(1, 1, n))

    def forward(self, x):
        return nn.functional.pad(x, (self.n, 0))


class OpModel(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.padder = Pad(2)
        self.conv = nn.Conv1d(channels, channels, 3)

    @property
    def buffer(self):
        return self.padder.buffer

    @buffer.setter
    def buffer(self, value):
        self.padder.buffer = value

    def forward(self, x):
        return self.conv(self.padder(x)) + self.buffer.sum()
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("property"), textwrap.dedent(SOURCE), input_specs=("4,10",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), length=st.sampled_from([3, 10]))
def test_property_with_setter_matches_torch(pair, seed, batch, length):
    assert_same_outputs(pair, [random_input(seed, (batch, 4, length))])
