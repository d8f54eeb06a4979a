"""Coordinate channels built for a feature map (CoordConv / SOLO: `torch.meshgrid` of two `linspace`s, each
`expand([n, 1, -1, -1])`, joined by `torch.cat([x, y], 1)`, then concatenated to the channels-last features): the
expand's written 1 was not known as a size-1 dim, so the two one-channel maps were joined in torch's layout and the
pair transposed to meet the features. Each is now channels-last by a reshape (one channel) and they join on the
last axis: the model converts at its boundary only. Matches torch on non-square drawn sizes."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 2, 1)
        self.head = nn.Conv2d(10, 4, 1)

    def forward(self, x):
        f = self.stem(x)
        x_range = torch.linspace(-1, 1, f.shape[-1])
        y_range = torch.linspace(-1, 1, f.shape[-2])
        y, x = torch.meshgrid(y_range, x_range, indexing="ij")
        y = y.expand([f.shape[0], 1, -1, -1])
        x = x.expand([f.shape[0], 1, -1, -1])
        coord_feat = torch.cat([x, y], 1)
        return self.head(torch.cat([f, coord_feat], 1))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("coordinate_channels"), textwrap.dedent(SOURCE), input_specs=("3,16,24",))


def test_the_coordinates_join_channels_last(pair):
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 16, 24))) == 2  # (was 3)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), height=st.integers(4, 19), width=st.integers(4, 19))
def test_port_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])
