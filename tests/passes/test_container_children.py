"""Children a forward reaches through containers written in two other common ways: a loop over a tuple of ModuleLists
(`for stage in (self.stage1, self.stage2): for block in stage:`, RepVGG's forward) and a `nn.ModuleDict` subclass
whose constructor fills `self["down"] = ...` and whose forward runs `self[name](x)` for each key. Each child is
known, so the channels-last blocks are called as they are laid out (once each were handed torch's order: wrong
results or a transpose per call). The ports match torch and trace only the boundary's Transposes.
"""

import pytest

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x))) + x


class Stage(nn.ModuleDict):
    def __init__(self, c, n):
        super().__init__()
        self["down"] = nn.Sequential(nn.Conv2d(c, c, 3, 2, 1), nn.ReLU())
        for i in range(n):
            self["block%d" % i] = Block(c)

    def forward(self, x):
        for name in self.keys():
            x = self[name](x)
        return x


class Net(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.proj = nn.Conv2d(3, c, 1)
        self.stage1 = nn.ModuleList([Block(c) for _ in range(2)])
        self.stage2 = nn.ModuleList([Block(c)])
        self.stage3 = Stage(c, 2)

    def forward(self, x):
        out = self.proj(x)
        for stage in (self.stage1, self.stage2):
            for block in stage:
                out = block(out)
        return self.stage3(out).mean((2, 3))
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """name -> output folder of the snippet's port (Net's defaults)."""
    return snippet_ports(tmp_path_factory, SOURCE, "3,8,8")


def test_children_reached_through_tuples_and_dict_subclasses_match_torch(ported):
    pair = PortedPair(ported("stages"), seed=1)
    assert_matches_converting_at_the_boundary(pair, random_input(1, (2, 3, 8, 8)))


def test_each_child_is_called_as_it_is_laid_out(ported):
    code = (ported("stages") / "op_model_keras.py").read_text()
    assert "block(out, training=training)" in code
    assert "self[name](x, training=training)" in code
    assert "call_module" not in code
