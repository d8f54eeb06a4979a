"""A Conv subclass whose forward computes on its own kernel (weight standardisation: BiT's StdConv2d, timm's
ScaledStdConv2d, the WS paper's Conv2d) reads `self.weight` where the runtime keeps it, channels-last (k..., I/g, O):
reductions over its dims, arithmetic and the functional convolution run on the kernel as stored. Before, every such
layer converted its kernel to torch's order and back (a standardised ResNet traced 73 Transposes, now 1); forms
porter cannot follow on the stored kernel (a reshape of it, `F.batch_norm` over it) convert it, and match torch. A
parameter such a subclass adds (ScaledStdConv2d's `gain`) is in the state after the layer's own, as torch has it."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

MODEL = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class StdConv2d(nn.Conv2d):
    def forward(self, x):
        w = self.weight
        v, m = torch.var_mean(w, dim=[1, 2, 3], keepdim=True, unbiased=False)
        w = (w - m) / torch.sqrt(v + 1e-10)
        return F.conv2d(x, w, self.bias, self.stride, self.padding, self.dilation, self.groups)


class WSConv2d(nn.Conv2d):
    def forward(self, x):
        weight = self.weight
        weight_mean = weight.mean(dim=1, keepdim=True).mean(dim=2, keepdim=True).mean(dim=3, keepdim=True)
        weight = weight - weight_mean
        std = weight.view(weight.size(0), -1).std(dim=1).view(-1, 1, 1, 1) + 1e-5
        weight = weight / std.expand_as(weight)
        return F.conv2d(x, weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class FlatStdConv2d(nn.Conv2d):
    def forward(self, x):
        w = self.weight
        flat = w.reshape(w.shape[0], -1)
        w = ((flat - flat.mean(1, keepdim=True)) / (flat.std(1, keepdim=True) + 1e-5)).reshape_as(w)
        return F.conv2d(x, w, self.bias, self.stride, self.padding, self.dilation, self.groups)


class ScaledStdConv2d(nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, gamma=1.0, eps=1e-6, gain_init=1.0):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation,
                         groups=groups, bias=bias)
        self.gain = nn.Parameter(torch.full((self.out_channels, 1, 1, 1), gain_init))
        self.scale = gamma * self.weight[0].numel() ** -0.5
        self.eps = eps

    def forward(self, x):
        weight = F.batch_norm(self.weight.reshape(1, self.out_channels, -1), None, None,
                              weight=(self.gain * self.scale).view(-1), training=True, momentum=0., eps=self.eps
                              ).reshape_as(self.weight)
        return F.conv2d(x, weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class StdConv1d(nn.Conv1d):
    def forward(self, x):
        s, m = torch.std_mean(self.weight, dim=(1, 2), keepdim=True)
        return F.conv1d(x, (self.weight - m) / (s + 1e-5), self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.std = StdConv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.ws = WSConv2d(8, 8, 3, padding=2, dilation=2, groups=2)
        self.flat = FlatStdConv2d(8, 8, 1)
        self.scaled = ScaledStdConv2d(8, 6, 3, padding=1, gain_init=1.5)
        self.seq = StdConv1d(6, 4, 3, stride=2, padding=1)

    def forward(self, x):
        x = torch.relu(self.std(x))
        x = torch.relu(self.ws(x))
        x = self.scaled(self.flat(x))
        return self.seq(x.mean(dim=3))
'''

STANDARDISED_ONLY = MODEL.replace("        self.flat = FlatStdConv2d(8, 8, 1)\n", "").replace(
    "        self.scaled = ScaledStdConv2d(8, 6, 3, padding=1, gain_init=1.5)\n", "").replace(
    "        x = self.scaled(self.flat(x))\n", "").replace("        x = torch.relu(self.ws(x))\n", "").replace(
    "StdConv1d(6, 4", "StdConv1d(8, 4")


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("std_conv"), MODEL, input_specs=("3,9,7",))


@pytest.fixture(scope="module")
def standardised(tmp_path_factory):
    return port(tmp_path_factory.mktemp("std_conv_only"), STANDARDISED_ONLY, input_specs=("3,9,7",))


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16), height=st.integers(5, 12), width=st.integers(4, 11))
def test_weight_standardised_convolutions_match_torch(net, batch, seed, height, width):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(net, [x], tolerance=1e-4)
    assert_same_outputs(net, [x], tolerance=1e-4, jit=True)


def test_a_kernel_standardised_by_reductions_is_never_transposed(standardised):
    x = random_input(0, (2, 3, 9, 7))
    assert_same_outputs(standardised, [x], tolerance=1e-4)
    assert count_transposes(standardised.keras_model, [x]) <= 2  # the image in; the sequence out
    module = standardised.out_dir / standardised.manifest["sources"][0]["module"]
    assert "TorchKernel(" in module.read_text()


def test_a_parameter_the_subclass_adds_is_in_the_state_after_the_layers_own(net):
    from porter.runtime.base import collect_state

    assert [entry.key for entry in collect_state(net.keras_model)] == list(net.torch_model.state_dict())
