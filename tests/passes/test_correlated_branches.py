"""Two `if`s of one test in one block (passes/correlated_branches.py): a variable the first leaves in a different
layout on each path, read next by the second, stays as each path left it (timm's ResNeSt SplitAttn: 9 Transposes in
a four-block net before, the input's one now).

A net of two split-attention blocks written in timm's style (a 5-d reshape of the radix groups, `sum(dim=1)`, the
original's `torch.split` style is tests/passes/test_split_attention.py's), each testing `if self.radix > 1:` twice
around the attention, matches torch for radix 1, 2 and 4 and traces only the boundary's Transposes. The reader's refusals (a test that could change between, the variable read between, an early exit) are
checked on the source alone.
"""

import libcst as cst
import pytest

from porter.frontend.names import names_in
from porter.passes.correlated_branches import later_branch_of_same_test
from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class RadixGate(nn.Module):
    def __init__(self, radix, groups):
        super().__init__()
        self.radix = radix
        self.groups = groups

    def forward(self, x):
        n = x.size(0)
        if self.radix > 1:
            x = x.view(n, self.groups, self.radix, -1).transpose(1, 2)
            x = F.softmax(x, dim=1).reshape(n, -1)
        else:
            x = torch.sigmoid(x)
        return x


class ReshapedSplat(nn.Module):

    def __init__(self, channels, radix):
        super().__init__()
        self.radix = radix
        self.conv = nn.Conv2d(channels, channels * radix, 3, padding=1, groups=radix, bias=False)
        self.bn = nn.BatchNorm2d(channels * radix)
        self.fc1 = nn.Conv2d(channels, 8, 1)
        self.fc2 = nn.Conv2d(8, channels * radix, 1)
        self.gate = RadixGate(radix, 1)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        n, rc, h, w = x.shape
        if self.radix > 1:
            x = x.reshape((n, self.radix, rc // self.radix, h, w))
            pooled = x.sum(dim=1)
        else:
            pooled = x
        pooled = F.relu(self.fc1(pooled.mean((2, 3), keepdim=True)))
        attention = self.gate(self.fc2(pooled)).view(n, -1, 1, 1)
        if self.radix > 1:
            out = (x * attention.reshape((n, self.radix, rc // self.radix, 1, 1))).sum(dim=1)
        else:
            out = x * attention
        return out


class Net(nn.Module):
    def __init__(self, radix=2):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.first = ReshapedSplat(8, radix)
        self.down = nn.Conv2d(8, 12, 3, stride=2, padding=1)
        self.second = ReshapedSplat(12, radix)
        self.head = nn.Conv2d(12, 5, 1)

    def forward(self, x):
        x = self.first(self.stem(x))
        x = self.second(self.down(x)) + x.mean() * 0
        return self.head(x)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """radix -> output folder of the snippet's port built with that radix."""
    return snippet_ports(tmp_path_factory, SOURCE, "3,13,11", "radix")


@pytest.mark.parametrize("radix", [1, 2, 4])
def test_split_attention_paths_keep_their_layouts(ported, radix):
    assert_matches_converting_at_the_boundary(PortedPair(ported(radix), seed=radix), random_input(radix, (2, 3, 13, 11)))


def _later(text, name="x"):
    """The statement later_branch_of_same_test finds for `name` after the first `if` of function `f` in `text`."""
    body = cst.parse_module(text).body[0].body.body
    first = next(index for index, statement in enumerate(body) if isinstance(statement, cst.If))
    module = cst.parse_module("")
    found = later_branch_of_same_test(body[first], body[first + 1:], name, lambda node: module.code_for_node(node),
                                      names_in)
    return None if found is None else body.index(found)


PAIRED = '''
def f(self, x):
    if self.radix > 1:
        x = g(x)
    {between}
    if self.radix > 1:
        x = h(x)
    return x
'''


@pytest.mark.parametrize("between, paired", [
    ("y = 1", True),
    ("y = x + 1", False),  # read between: it needs one layout there
    ("self.radix = 1", False),  # the test may change
    ("scale = self.radix * 2", True),
    ("if y:\n        return y", False),  # the later `if` may not run
])
def test_later_branch_of_same_test(between, paired):
    assert (_later(PAIRED.format(between=between)) is not None) == paired


@pytest.mark.parametrize("text", [
    "def f(self, x):\n    if self.check():\n        x = g(x)\n    if self.check():\n        x = h(x)\n",  # a call
    "def f(self, x, k):\n    if k:\n        x = g(x)\n        k = 0\n    if k:\n        x = h(x)\n",  # rebound
    "def f(self, x, k):\n    if k:\n        x = g(x)\n    if not k:\n        x = h(x)\n",  # another test
    "def f(self, x, k):\n    if k:\n        x = g(x)\n    elif self.a:\n        x = 1\n    if k:\n        x = h(x)\n",
])
def test_branches_that_may_not_continue_each_other(text):
    assert _later(text) is None
