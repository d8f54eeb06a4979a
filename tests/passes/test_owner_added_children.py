"""A Sequential subclass whose own forward runs every child and concatenates their outputs (pytorchcv's
`Concurrent`, `SequentialConcurrent`) gets its children from its OWNER (`self.branches = Concurrent()` then
`self.branches.add_module("branch1", block)`): those children are the container's known children, so its call runs
channels-last and joins on the last axis (no Transpose per unit). Its merge mode decided in __init__ from a
`None` default (`if merge_type is not None: ... else: "stack" if stack else "cat"`) and a list begun as
`[x] if self.cat_input else []` then appended to are followed per construction."""

import numpy as np
import pytest

from porter.verify.harness import count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import port, random_input

MODEL = '''
import torch
from torch import nn


class Concurrent(nn.Sequential):
    def __init__(self, axis=1, stack=False, merge_type=None, cat_input=False):
        super().__init__()
        self.axis = axis
        self.cat_input = cat_input
        if merge_type is not None:
            self.merge_type = merge_type
        else:
            self.merge_type = "stack" if stack else "cat"

    def forward(self, x):
        out = [x] if self.cat_input else []
        for module in self._modules.values():
            out.append(module(x))
        if self.merge_type == "stack":
            return torch.stack(tuple(out), dim=self.axis)
        return torch.cat(tuple(out), dim=self.axis)


class Unit(nn.Module):
    def __init__(self, channels, branches, cat_input=False):
        super().__init__()
        self.branches = Concurrent(cat_input=cat_input)
        for i in range(branches):
            self.branches.add_module("branch{}".format(i + 1), nn.Sequential(
                nn.Conv2d(channels, 4, 3, padding=1), nn.ReLU()))
        self.branches.add_module("pool", nn.MaxPool2d(3, 1, 1))
        self.conv = nn.Conv2d(channels * (1 + cat_input) + 4 * branches, channels, 1)

    def forward(self, x):
        return self.conv(self.branches(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.units = nn.Sequential(Unit(8, 2), Unit(8, 3, cat_input=True))
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        x = self.units(x)
        return self.head(x.mean(dim=(2, 3)))
'''


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("owner_added_children"), MODEL, input_specs=("8,6,6",))


def test_owner_added_branches_match_torch_channels_last(net):
    x = random_input(0, (2, 8, 6, 6))
    keras_model = assert_built_matches_torch(net, x)
    assert count_transposes(keras_model, [x]) <= 1
