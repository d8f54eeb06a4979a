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


# A standardised kernel returned by a helper method (timm's ScaledStdConv2d before `F.batch_norm`: `def
# get_weight(self): ...; return (self.weight - mean) / (std + eps)`, then `F.conv2d(x, self.get_weight(), ...)`):
# the method converted its return to torch's order and the convolution back (2 Transposes a layer). The kernel is
# now returned as it lies, its callers reading the layout from the template.
HELPER = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class ScaledStdConv2d(nn.Conv2d):
    def __init__(self, *args, gamma=1.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.gain = nn.Parameter(torch.ones(self.out_channels, 1, 1, 1))
        self.scale = gamma * self.weight[0].numel() ** -0.5

    def get_weight(self):
        std, mean = torch.std_mean(self.weight, dim=[1, 2, 3], keepdim=True, unbiased=False)
        weight = self.scale * (self.weight - mean) / (std + 1e-5)
        return self.gain * weight

    def forward(self, x):
        return F.conv2d(x, self.get_weight(), self.bias, self.stride, self.padding, self.dilation, self.groups)


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = ScaledStdConv2d(3, 8, 3, padding=1)
        self.b = ScaledStdConv2d(8, 8, 3, stride=2, padding=1, groups=2)

    def forward(self, x):
        return self.b(torch.relu(self.a(x))).mean((2, 3))
'''


# The WS paper's Conv2d (joe-siyuan-qiao/WeightStandardization, copied into many GN+WS ResNets): the per-filter std
# of `weight.view(weight.size(0), -1)` and `std.expand_as(weight)` made the kernel's rows in torch's order (2
# Transposes a layer). An order-free reduction of a kernel's (O, rest) rows now runs over the kernel as it lies, and
# a tensor of size-1 dims expanded as the kernel is moved to its order by a reshape.
WS_PAPER = '''
import torch.nn as nn
import torch.nn.functional as F


class Conv2d(nn.Conv2d):
    def forward(self, x):
        weight = self.weight
        weight_mean = weight.mean(dim=1, keepdim=True).mean(dim=2, keepdim=True).mean(dim=3, keepdim=True)
        weight = weight - weight_mean
        std = weight.view(weight.size(0), -1).std(dim=1).view(-1, 1, 1, 1) + 1e-5
        weight = weight / std.expand_as(weight)
        return F.conv2d(x, weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Conv2d(3, 8, 3, padding=1, bias=False)
        self.norm = nn.GroupNorm(2, 8)
        self.b = Conv2d(8, 8, 3, stride=2, padding=1, groups=2)

    def forward(self, x):
        return self.b(F.relu(self.norm(self.a(x)))).mean((2, 3))
'''


# An NFNet port's WSConv2d (vballoli/nfnets-pytorch style): NumPy's keyword names (`torch.mean(w, axis=[1, 2, 3],
# keepdims=True)`, which torch accepts; the runtime refused them) and the fan-in `self.weight.shape[1:].numel()` (a
# tuple has no `numel`: the port did not build). Both are torch's now; the kernel stays as the convolution holds it.
NFNET = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class WSConv2d(nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)
        nn.init.xavier_normal_(self.weight)
        self.gain = nn.Parameter(torch.ones(self.out_channels, 1, 1, 1))
        self.register_buffer('eps', torch.tensor(1e-4, requires_grad=False), persistent=False)
        self.register_buffer('fan_in', torch.tensor(self.weight.shape[1:].numel(), requires_grad=False).type_as(self.weight), persistent=False)

    def standardized_weights(self):
        mean = torch.mean(self.weight, axis=[1, 2, 3], keepdims=True)
        var = torch.var(self.weight, axis=[1, 2, 3], keepdims=True)
        scale = torch.rsqrt(torch.maximum(var * self.fan_in, self.eps))
        return (self.weight - mean) * scale * self.gain

    def forward(self, x):
        return F.conv2d(input=x, weight=self.standardized_weights(), bias=self.bias, stride=self.stride,
                        padding=self.padding, dilation=self.dilation, groups=self.groups)


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = WSConv2d(3, 8, 3, padding=1)
        self.b = WSConv2d(8, 8, 3, stride=2, padding=1)

    def forward(self, x):
        return self.b(F.gelu(self.a(x))).mean((2, 3))
'''


# each a standardising layer in another codebase's style, in a two-layer model
STANDARDISED_LAYERS = {"helper_method": HELPER, "ws_paper": WS_PAPER, "nfnet": NFNET}


@pytest.fixture(scope="module", params=sorted(STANDARDISED_LAYERS))
def layer_style(request, tmp_path_factory):
    return port(tmp_path_factory.mktemp(request.param), STANDARDISED_LAYERS[request.param])


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 2), seed=st.integers(0, 2**16), height=st.sampled_from([5, 8]), width=st.sampled_from([4, 9]))
def test_each_standardising_style_matches_torch(layer_style, batch, seed, height, width):
    assert_same_outputs(layer_style, [random_input(seed, (batch, 3, height, width))])


def test_each_standardising_style_keeps_its_kernels_as_held(layer_style):
    assert count_transposes(layer_style.keras_model, [random_input(0, (2, 3, 8, 8))]) == 1
