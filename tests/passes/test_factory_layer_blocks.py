"""pytorchcv's way of building blocks, in one file: norms and activations made by lambda factories
(`lambda_batchnorm2d()`, `lambda_relu()`) that `create_normalization_layer` / `create_activation_layer` call or
take as modules (`isfunction` decides), checked with `assert isinstance(self.bn, nn.Module)`; a ghost block joining
two such blocks' outputs along channels (`torch.cat((x, y), dim=1)`) and a unit adding its body to its identity.

porter cannot type those layers statically: it calls them through `call_module` with images held channels-last,
whose rank it then does not know. Such images stay channels-last through the norm, the activation, the residual
sum and the channel concatenation (pytorchcv's resnet traced 23 Transposes and its ghostnet 136 before; 1 and 2
now). The port matches torch, eagerly and under XLA, and converts only at its boundary.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

SOURCE = '''
from inspect import isfunction

import torch
from torch import nn


def lambda_relu():
    return lambda: nn.ReLU(inplace=True)


def lambda_batchnorm2d(eps=1e-5):
    return lambda num_features: nn.BatchNorm2d(num_features=num_features, eps=eps)


def create_activation_layer(activation):
    if isfunction(activation):
        return activation()
    elif isinstance(activation, str):
        return nn.ReLU6() if activation == "relu6" else nn.Sigmoid()
    assert isinstance(activation, nn.Module)
    return activation


def create_normalization_layer(normalization, **kwargs):
    if isfunction(normalization):
        return normalization(**kwargs)
    assert isinstance(normalization, nn.Module)
    return normalization


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, kernel_size=3, stride=1, groups=1, normalization=lambda_batchnorm2d(),
                 activation=lambda_relu()):
        super().__init__()
        self.activate = activation is not None
        self.conv = nn.Conv2d(cin, cout, kernel_size, stride, kernel_size // 2, groups=groups, bias=False)
        self.bn = create_normalization_layer(normalization, num_features=cout)
        assert isinstance(self.bn, nn.Module)
        if self.activate:
            self.activ = create_activation_layer(activation)

    def forward(self, x):
        x = self.bn(self.conv(x))
        if self.activate:
            x = self.activ(x)
        return x


def conv1x1_block(cin, cout, **kwargs):
    return ConvBlock(cin, cout, kernel_size=1, **kwargs)


class GhostConv(nn.Module):
    def __init__(self, cin, cout, activation=lambda_relu()):
        super().__init__()
        half = cout // 2
        self.main_conv = conv1x1_block(cin, half, activation=activation)
        self.cheap_conv = ConvBlock(half, cout - half, groups=half, activation=activation)

    def forward(self, x):
        x = self.main_conv(x)
        y = self.cheap_conv(x)
        return torch.cat((x, y), dim=1)


class Unit(nn.Module):
    def __init__(self, cin, cout, stride, activation):
        super().__init__()
        self.resize_identity = cin != cout or stride != 1
        self.body = nn.Sequential(GhostConv(cin, cout), ConvBlock(cout, cout, stride=stride, activation=None))
        if self.resize_identity:
            self.identity_conv = conv1x1_block(cin, cout, activation=None)
            self.pool = nn.AvgPool2d(stride, stride, ceil_mode=True) if stride > 1 else nn.Identity()
        self.activ = create_activation_layer(activation)

    def forward(self, x):
        identity = self.pool(self.identity_conv(x)) if self.resize_identity else x
        x = self.body(x)
        return self.activ(x + identity)


class Net(nn.Module):
    def __init__(self, width=4, activation="relu6", num_classes=3):
        super().__init__()
        self.features = nn.Sequential(ConvBlock(3, width), Unit(width, width, 1, activation),
                                      Unit(width, 2 * width, 2, lambda_relu()))
        self.output = nn.Linear(2 * width, num_classes)

    def forward(self, x):
        x = self.features(x).mean((2, 3))
        return self.output(x)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """activation of the first unit (a name or a factory made in the model) -> output folder of the port."""
    return snippet_ports(tmp_path_factory, SOURCE, "3,8,8", "activation")


@settings(max_examples=3, deadline=None)
@given(activation=st.sampled_from(["relu6", "sigmoid"]), batch=st.integers(1, 2), size=st.sampled_from([5, 7, 8]),
       seed=st.integers(0, 2**16))
def test_factory_built_blocks_match_torch_converting_only_at_the_boundary(ported, activation, batch, size, seed):
    pair = PortedPair(ported(activation), seed=seed)
    assert_matches_converting_at_the_boundary(pair, random_input(seed, (batch, 3, size, size)))
