"""A forward that runs the module's children in turn (pycls' AnyNet: `for module in self.children(): x =
module(x)`), the last child a classifier head returning logits: each child was called through `call_module`, in
torch's layout, converting every stage's image in and out (7 Transposes for a stem, two stages and a head). The
logits (rank 2) have one layout whichever way they are held, so the children's calls are one plain call taking
and returning images channels-last. Matches torch for drawn sizes; the boundary's Transpose only."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch.nn as nn


class Stage(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        return x + self.bn(self.conv(x))


class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(c, n)

    def forward(self, x):
        x = self.pool(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.s1 = Stage(8)
        self.s2 = Stage(8)
        self.head = Head(8, 10)

    def forward(self, x):
        for module in self.children():
            x = module(x)
        return x
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("children"), textwrap.dedent(SOURCE), input_specs=("3,16,16",))


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), size=st.sampled_from([9, 16, 21]))
def test_children_loop_matches_torch(pair, seed, batch, size):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, size, size))])


def test_children_loop_keeps_images_channels_last(pair):
    x = random_input(0, (2, 3, 16, 16))
    assert_same_outputs(pair, [x], jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 2


# The named children of a Sequential attribute (CSAIL's UPerNet backbone: `for name, module in
# self.body.named_children(): x = module(x)`, the stage outputs kept for the head): `named_children` of a child was
# no module iteration, so every stage ran through `call_module` (UPerNet: 21 Transposes, now 2).
NAMED_CHILDREN = '''
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(OrderedDict([
            ("stem", nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU())),
            ("layer1", nn.Conv2d(8, 8, 3, 1, 1)),
            ("layer2", nn.Conv2d(8, 8, 3, 2, 1))]))
        self.fuse = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        outs = []
        for name, module in self.body.named_children():
            x = module(x)
            if name.startswith("layer"):
                outs.append(x)
        top = F.interpolate(outs[-1], size=outs[0].shape[2:], mode="nearest")
        return self.fuse(torch.cat([outs[0], top], 1))
'''


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    return port(tmp_path_factory.mktemp("named_children"), textwrap.dedent(NAMED_CHILDREN), input_specs=("3,16,16",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), size=st.sampled_from([8, 16]))
def test_named_children_loop_matches_torch_channels_last(named, seed, batch, size):
    x = random_input(seed, (batch, 3, size, size))
    assert_same_outputs(named, [x])
    assert count_transposes(named.keras_model, [x]) <= 2
