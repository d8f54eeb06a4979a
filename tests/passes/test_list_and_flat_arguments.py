"""Arguments a block takes in a form of their own, as real code hands them (timm's SelecSLS and GhostNet):

- a block that normalises its argument to a list (`if not isinstance(x, list): x = [x]`, SelecSlsBlock) and is
  handed a list holding a channels-last image: `[x]` of a list is a list of lists, so the join of the two paths
  brings the handed list's images to torch's order (before: its channels-last image was read as torch's, and the
  block's conv raised or, with as many channels as rows, computed on the wrong axis);
- an image flattened as it lies (channels-last) handed to a `nn.Linear` subclass with its own forward (timm's
  `Linear`, GhostNet's classifier): reordered to torch's order at the call, where its channel count is known
  (before: `flat_to_torch_order(input, None)` inside the subclass raised TypeError); after a global pool the orders
  agree and nothing is reordered.
- a method whose returns disagree (timm FastViT's `forward_features`: `return outs`, a list of normed stage images,
  under a constructor flag, else the image): made again returning everything in torch's layout, so its caller
  hands the head an image, not the list (before: the head was specialised for a list and raised).
Eagerly and under XLA, drawn batch and sizes (batch 1, odd sizes); the flag both ways."""

import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

LIST_BLOCKS = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        if not isinstance(x, list):
            x = [x]
        y = self.conv(x[0])
        return [y, y + x[-1]]


class Net(nn.Module):
    def __init__(self, names=("a", "b")):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.names = list(names)
        self.blocks = nn.ModuleDict({n: Block(4) for n in names})

    def forward(self, x):
        feats = [self.stem(x)]
        for name in self.names:
            feats = self.blocks[name](feats)
        y = self.blocks["a"](feats[0])
        return feats[0] + feats[1] + y[1]
'''

FLAT_INTO_LINEAR_SUBCLASS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Linear(nn.Linear):
    def forward(self, input):
        return F.linear(input, self.weight, self.bias)


class Net(nn.Module):
    def __init__(self, pooled=POOLED):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(pooled)
        self.flatten = nn.Flatten(1)
        self.fc = Linear(6 * pooled * pooled, 5)

    def forward(self, x):
        return self.fc(self.flatten(self.pool(self.conv(x))))
'''

FORK_FEAT = '''
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c, n)

    def forward(self, x):
        return self.fc(self.pool(x).flatten(1))


class Net(nn.Module):
    def __init__(self, fork_feat=FORK):
        super().__init__()
        self.fork_feat = fork_feat
        self.stages = nn.ModuleList([nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 3, stride=2, padding=1)])
        self.norm1 = nn.BatchNorm2d(8)
        self.head = Head(8, 5)

    def forward_features(self, x):
        outs = []
        for idx, block in enumerate(self.stages):
            x = block(x)
            if self.fork_feat:
                if idx == 1:
                    outs.append(self.norm1(x))
        if self.fork_feat:
            return outs
        return x

    def forward(self, x):
        x = self.forward_features(x)
        if self.fork_feat:
            return x[0] * 2
        return self.head(x)
'''

SOURCES = {
    "fork_feat_off": FORK_FEAT.replace("FORK", "False"),
    "fork_feat_on": FORK_FEAT.replace("FORK", "True"),
    "list_blocks": LIST_BLOCKS,
    "flat_global_pool": FLAT_INTO_LINEAR_SUBCLASS.replace("POOLED", "1"),
    "flat_two_by_two": FLAT_INTO_LINEAR_SUBCLASS.replace("POOLED", "2"),
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = port(tmp_path_factory.mktemp(name), textwrap.dedent(SOURCES[name]), input_specs=("3,6,6",))
        return cache[name]

    return get


@pytest.mark.parametrize("name", sorted(SOURCES))
@given(batch=st.integers(1, 3), height=st.sampled_from([2, 3, 5, 8]), width=st.sampled_from([2, 4, 7]),
       seed=st.integers(0, 2**16))
def test_argument_forms_match_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    for jit in (False, True):
        assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} jit={jit} x{x.shape}", jit=jit)


def test_flattened_global_pool_is_not_reordered(ported):
    """After a global pool the flattened channels-last image is torch's order already: no Transpose traced
    (the boundary's one aside)."""
    from porter.verify.harness import count_transposes

    pair = ported("flat_global_pool")
    assert count_transposes(pair.keras_model, [random_input(0, (2, 3, 6, 6))]) <= 1
