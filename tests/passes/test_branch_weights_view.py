"""Selective-kernel branches (SKNet's): two conv + norm branches stacked along a new dim 1 (held with the new axis
where it goes, without moving data), weighted by `fc(pooled).view(B, 2, C)` softmaxed over the branches, and summed
over them. That view to fewer dims of a channels-last image neither ends in -1 nor is given a size read off the
image, so nothing says it is an (N, C, H*W) merge of the spatial dims: it runs in torch's order (a reshape of the
pooled 1x1 image) and the weights broadcast onto the stack as it lies. Before, it was held as an (N, H*W, C) merge:
a transpose at run time, then the weights and the stack both went to torch's order for the product and back (this
snippet 7 Transposes, now the boundary's one). The port matches torch."""

import pytest

from porter.verify.harness import count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import port, random_input

MODEL = '''
import torch
from torch import nn


class Branch(nn.Module):
    def __init__(self, channels, dilation):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=dilation, dilation=dilation)
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return self.bn(self.conv(x))


class SelectiveKernel(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.branch1 = Branch(channels, 1)
        self.branch2 = Branch(channels, 2)
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
        self.first = SelectiveKernel(8)
        self.second = SelectiveKernel(8)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(8, 5)

    def forward(self, x):
        features = self.second(self.first(self.stem(x)))
        return self.classifier(torch.flatten(self.pool(features), 1))
'''


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("branch_weights_view"), MODEL, input_specs=("3,8,8",))


def test_branch_weights_viewed_from_a_pooled_image_broadcast_onto_the_stack_as_it_lies(net):
    x = random_input(0, (2, 3, 8, 8))
    assert count_transposes(assert_built_matches_torch(net, x), [x]) <= 1
