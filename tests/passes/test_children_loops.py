"""Loops in `forward` over children of different kinds: `[m(x) for m in self.paths]` (a ModuleList of a conv
block, a 1x1 conv and an Identity), `for module in self._modules.values()` in an nn.Sequential subclass with a forward
of its own (resnext_features' LambdaMap), `self.children()` of a plain module, then the list combined by
`functools.reduce(lambda a, b: a + b, ...)`, `sum(...)` or `torch.cat(..., 1)`.

The loop variable is any one of the children: each call is a plain channels-last call when every child takes and
hands back the image as it is stored, and the combination keeps that layout, so the model converts only at its
boundary. Before, the loop bound the first child only (a ModuleList whose children differ came out with the wrong
shape), a Sequential subclass with its own forward was simulated as a chain of its children (it crashed), and
`self.children()` of a plain module was called as a module (and, when its children were added by `add_module` in
a loop, pycls's RegNet AnyStage, each was called through call_module, converting in and out). The port matches torch (eager and XLA) for
hypothesis-drawn widths, sizes and batches.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, port_cache, random_input

SOURCE = '''
from functools import reduce

import torch
import torch.nn as nn


class Branches(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.paths = nn.ModuleList([nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU()),
                                    nn.Conv2d(c, c, 1), nn.Identity()])

    def forward(self, x):
        outs = [m(x) for m in self.paths]
        return reduce(lambda a, b: a + b, outs)


class Paths(nn.Sequential):
    def __init__(self, c):
        super().__init__(nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU()),
                         nn.Conv2d(c, c, 1), nn.Identity())

    def forward(self, x):
        outputs = []
        for module in self._modules.values():
            outputs.append(module(x))
        return torch.cat(outputs, 1)


class Kids(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.b = nn.Conv2d(c, c, 1)

    def forward(self, x):
        return sum([m(x) for m in self.children()])


class Block(nn.Module):
    def __init__(self, w_in, w_out):
        super().__init__()
        self.conv = nn.Conv2d(w_in, w_out, 3, padding=1)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.conv(x))


class Stage(nn.Module):
    def __init__(self, w_in, w_out, depth, block_fun):
        super().__init__()
        for i in range(depth):
            self.add_module("b{}".format(i + 1), block_fun(w_in if i == 0 else w_out, w_out))

    def forward(self, x):
        for block in self.children():
            x = block(x)
        return x


class Net(nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.branches = Branches(width)
        self.paths = Paths(width)
        self.kids = Kids(3 * width)
        self.stage = Stage(3 * width, width, 2, Block)

    def forward(self, x):
        return self.stage(self.kids(self.paths(self.branches(self.stem(x)))))
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {"children": SOURCE})


@settings(max_examples=3, deadline=None)
@given(width=st.integers(1, 6), batch=st.integers(1, 2), size=st.integers(3, 9), seed=st.integers(0, 2**16))
def test_loops_over_children_of_different_kinds_match_torch_and_convert_only_at_the_boundary(ported, width, batch,
                                                                                             size, seed):
    pair = PortedPair(ported("children").out_dir, init_args={"width": width}, seed=seed)
    x = random_input(seed, (batch, 3, size, size))
    assert_matches_converting_at_the_boundary(pair, x)


def test_the_loops_call_the_children_as_they_are_stored(ported):
    code = (ported("children").out_dir / "op_model_keras.py").read_text()
    assert "outs = [m(x, training=training) for m in self.paths]" in code
    assert "return reduce(lambda a, b: a + b, outs)" in code
    assert "outputs.append(module(x, training=training))" in code
    assert "sum([m(x, training=training) for m in self.children()])" in code
    assert "call_module" not in code.split("class Branches")[1]
    assert "x = block(x, training=training)" in code  # (pycls's AnyStage: the blocks `add_module` named in a loop)
