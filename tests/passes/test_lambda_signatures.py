"""Lambdas a class's constructions write in a constructor and the class calls on images: akamaster's CIFAR ResNet
shortcut `LambdaLayer(lambda x: F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, planes // 4, planes // 4), "constant", 0))`
(option A), a lambda called once on a channels-last image and once on one in torch's layout, and one handed to `map`
(called as a plain callable, in torch's layout).

What was slow before: the shortcut's slice and pad name torch's axes, so the lambda was called in torch's layout, a
conversion each way around every shortcut (5 Transposes where 1 converts the input). Now the first call fixes the
lambdas' signature, each lambda is written in its constructor translated for it (lambda_signatures.py), and every
call hands its images in that layout. The ports match torch, eagerly and under XLA, for drawn sizes and batches.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import assert_matches_torch, snippet_ports
from tests.rules.op_ports import random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class LambdaLayer(nn.Module):
    def __init__(self, lambd):
        super(LambdaLayer, self).__init__()
        self.lambd = lambd

    def forward(self, x):
        return self.lambd(x)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1, option="A"):
        super(BasicBlock, self).__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            if option == "A":
                self.shortcut = LambdaLayer(lambda x:
                                            F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, planes // 4, planes // 4),
                                                  "constant", 0))
            elif option == "B":
                self.shortcut = nn.Sequential(
                    nn.Conv2d(in_planes, self.expansion * planes, kernel_size=1, stride=stride, bias=False),
                    nn.BatchNorm2d(self.expansion * planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        return F.relu(out)


class Twice(nn.Module):
    """Calls the function it is handed on a channels-last image and on a token matrix in torch's layout."""

    def __init__(self, c, f):
        super().__init__()
        self.f = f
        self.conv = nn.Conv2d(c, c, 1)

    def forward(self, x):
        y = self.f(self.conv(x))
        tokens = x.flatten(2)
        return y, self.f(tokens)


class Mapped(nn.Module):
    """Hands the function it is handed to `map` too: called as any plain callable, in torch's layout."""

    def __init__(self, c, g):
        super().__init__()
        self.g = g
        self.conv = nn.Conv2d(c, c, 1)

    def forward(self, x):
        x = self.conv(x)
        a, b = map(self.g, (x, x * 2))
        return torch.cat([a, b], 1) + self.g(x).repeat(1, 2, 1, 1)


class Net(nn.Module):
    def __init__(self, option="A"):
        super().__init__()
        self.in_planes = 8
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = self._make_layer(BasicBlock, 8, 2, 1, option)
        self.layer2 = self._make_layer(BasicBlock, 16, 2, 2, option)
        self.layer3 = self._make_layer(BasicBlock, 32, 1, 2, option)
        self.linear = nn.Linear(32, 10)

    def _make_layer(self, block, planes, num_blocks, stride, option):
        strides = [stride] + [1] * (num_blocks - 1)
        layers = []
        for stride in strides:
            layers.append(block(self.in_planes, planes, stride, option))
            self.in_planes = planes * block.expansion
        return nn.Sequential(*layers)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer3(self.layer2(self.layer1(out)))
        out = F.avg_pool2d(out, out.size()[3])
        return self.linear(out.view(out.size(0), -1))
'''

EXTRAS = SOURCE.replace("class Net(nn.Module):", "class Unused(nn.Module):") + '''

class Net(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.twice = Twice(c, lambda t: t[:, 1:] * 2.0 + t.mean(1, keepdim=True))
        self.mapped = Mapped(c, lambda t: t[:, :, ::2] - t[:, :, ::2].amax(1, keepdim=True))

    def forward(self, x):
        y, tokens = self.twice(x)
        return y, tokens, self.mapped(x)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """option -> output folder of the CIFAR ResNet built with it."""
    return snippet_ports(tmp_path_factory, SOURCE, "3,16,16", "option")


@pytest.fixture(scope="module")
def extras(tmp_path_factory):
    return snippet_ports(tmp_path_factory, EXTRAS, "4,5,6")(None)


@settings(max_examples=4, deadline=None)
@given(option=st.sampled_from(["A", "B"]), batch=st.integers(1, 2), size=st.sampled_from([8, 12, 16]),
       seed=st.integers(0, 2**16))
def test_cifar_resnet_matches_torch(ported, option, batch, size, seed):
    assert_matches_torch(ported(option), seed, (batch, 3, size, size))


def test_option_a_shortcuts_run_channels_last(ported):
    pair = PortedPair(ported("A"), seed=1)
    code = (ported("A") / "op_model_keras.py").read_text()
    layer = code.split("class LambdaLayer")[1].split("class BasicBlock")[0]
    assert "x[:, ::2, ::2]" in code and "return self.lambd(x)" in layer, layer
    assert count_transposes(pair.keras_model, [random_input(1, (2, 3, 16, 16))]) <= 1


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 2), height=st.sampled_from([3, 5]), width=st.sampled_from([4, 6]),
       seed=st.integers(0, 2**16))
def test_lambdas_called_in_two_layouts_and_mapped_match_torch(extras, batch, height, width, seed):
    assert_matches_torch(extras, seed, (batch, 4, height, width))
