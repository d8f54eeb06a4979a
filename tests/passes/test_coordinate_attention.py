"""Coordinate attention (Hou et al.'s CoordAtt, in many mobile nets and detectors): the width-pooled map
`pool_w(x).permute(0, 1, 3, 2)` is catted with the height-pooled one along dim 2, convolved, split and permuted
back. The permute of the channels-last (N, 1, W, C) map was made real in torch's order and then converted to
channels-last (two Transposes, each way); brought to the images' layout at once it moves only a size-1 axis (a
reshape). Matches torch for drawn sizes (odd ones, batch 1); the boundary's Transposes only."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class CoordAtt(nn.Module):
    def __init__(self, inp, oup, reduction=32):
        super().__init__()
        self.pool_h = nn.AdaptiveAvgPool2d((None, 1))
        self.pool_w = nn.AdaptiveAvgPool2d((1, None))
        mip = max(8, inp // reduction)
        self.conv1 = nn.Conv2d(inp, mip, kernel_size=1, stride=1, padding=0)
        self.bn1 = nn.BatchNorm2d(mip)
        self.act = nn.Hardswish()
        self.conv_h = nn.Conv2d(mip, oup, kernel_size=1, stride=1, padding=0)
        self.conv_w = nn.Conv2d(mip, oup, kernel_size=1, stride=1, padding=0)

    def forward(self, x):
        identity = x
        n, c, h, w = x.size()
        x_h = self.pool_h(x)
        x_w = self.pool_w(x).permute(0, 1, 3, 2)
        y = torch.cat([x_h, x_w], dim=2)
        y = self.act(self.bn1(self.conv1(y)))
        x_h, x_w = torch.split(y, [h, w], dim=2)
        x_w = x_w.permute(0, 1, 3, 2)
        a_h = self.conv_h(x_h).sigmoid()
        a_w = self.conv_w(x_w).sigmoid()
        return identity * a_w * a_h


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.att = CoordAtt(16, 16)
        self.head = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        return self.head(self.att(self.stem(x)))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("coordatt"), textwrap.dedent(SOURCE), input_specs=("3,9,11",))


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.sampled_from([5, 9]),
       width=st.sampled_from([7, 12]))
def test_coordinate_attention_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])


def test_coordinate_attention_keeps_images_channels_last(pair):
    x = random_input(0, (2, 3, 9, 11))
    assert_same_outputs(pair, [x], jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 2
