"""Selective-kernel branches (pytorchcv's SKNet): each branch a conv then a norm made by a helper that takes a layer
maker or a layer (`create_layer(normalization, channels)`, a layer porter cannot type), the branches stacked along a
new dim 1, weighted and summed over it. The untyped layer hands back a channels-last image of the rank it took (4
after the Conv2d), so the stack is held with its new axis where it goes without moving data; the branch weights,
`fc(pooled).view(B, 2, C)` (no -1, no size read off the image: not an (N, C, H*W) merge), are viewed in torch's order
(a reshape of a 1x1 image) and broadcast onto the stack as it lies. No Transpose but the boundary's (before: the
branches' rank was unknown, the stack went to torch's layout and back; this snippet 9 Transposes). The port matches
torch."""

import pytest

from porter.verify.harness import count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import port, random_input

MODEL = '''
from inspect import isfunction

import torch
from torch import nn


def create_layer(maker, channels):
    if isfunction(maker):
        return maker(channels)
    return maker


class Branch(nn.Module):
    def __init__(self, channels, dilation, normalization):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=dilation, dilation=dilation)
        self.bn = create_layer(normalization, channels)

    def forward(self, x):
        return self.bn(self.conv(x))


class SelectiveKernel(nn.Module):
    def __init__(self, channels, normalization):
        super().__init__()
        self.branch1 = Branch(channels, 1, normalization)
        self.branch2 = Branch(channels, 2, normalization)
        self.fc = nn.Conv2d(channels, 2 * channels, 1)
        self.channels = channels

    def forward(self, x):
        y = torch.stack([self.branch1(x), self.branch2(x)], dim=1)
        s = y.sum(dim=1).mean(dim=(2, 3), keepdim=True)
        w = self.fc(s).view(x.size(0), 2, self.channels)
        w = torch.softmax(w, dim=1).unsqueeze(-1).unsqueeze(-1)
        return (y * w).sum(dim=1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.made = SelectiveKernel(8, lambda c: nn.BatchNorm2d(c))  # a layer maker, then a layer handed in
        self.handed = SelectiveKernel(8, nn.BatchNorm2d(8))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(8, 5)

    def forward(self, x):
        features = self.handed(self.made(self.stem(x)))
        return self.classifier(torch.flatten(self.pool(features), 1))
'''


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("untyped_layer_rank"), MODEL, input_specs=("3,8,8",))


def test_stacked_branches_ending_in_an_untyped_layer_stay_channels_last(net):
    x = random_input(0, (2, 3, 8, 8))
    assert count_transposes(assert_built_matches_torch(net, x), [x]) <= 1
