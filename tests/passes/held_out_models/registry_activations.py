"""A normalizer-free convnet in timm's style: activations chosen by name from module-level registries that test
torch's features (`_has_silu = 'silu' in dir(torch.nn.functional)`), memory-efficient activations as autograd
Functions wrapped in modules (`SwishAutoFn.apply(x)`), a gamma-scaled activation holding a function from a registry,
and weight-standardised convolutions. Written for the test; the constructs are those of timm's nfnet.py and
layers/create_act.py, activations_me.py."""

from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F

_has_silu = "silu" in dir(torch.nn.functional)
_has_mish = "mish" in dir(F)
_has_nothing = "no_such_activation" in dir(F)


def swish_fwd(x):
    return x.mul(torch.sigmoid(x))


def swish_bwd(x, grad_output):
    x_sigmoid = torch.sigmoid(x)
    return grad_output * (x_sigmoid * (1 + x * (1 - x_sigmoid)))


class SwishAutoFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return swish_fwd(x)

    @staticmethod
    def backward(ctx, grad_output):
        x = ctx.saved_tensors[0]
        return swish_bwd(x, grad_output)


class SwishMe(nn.Module):
    def __init__(self, inplace: bool = False):
        super().__init__()

    def forward(self, x):
        return SwishAutoFn.apply(x)


def swish(x, inplace: bool = False):
    return x.mul_(x.sigmoid()) if inplace else x.mul(x.sigmoid())


def gelu(x, inplace: bool = False):
    return F.gelu(x)


_ACT_FN = dict(silu=F.silu if _has_silu else swish, relu=F.relu, gelu=gelu)
_ACT_LAYER = dict(silu=nn.SiLU if _has_silu else SwishMe, swish_me=SwishMe, relu=nn.ReLU,
                  mish=nn.Mish if _has_mish else nn.ReLU, odd=nn.Tanh if _has_nothing else nn.Hardswish)


def get_act_fn(name="relu"):
    if not name:
        return None
    return _ACT_FN[name.lower()]


def get_act_layer(name="relu"):
    if not isinstance(name, str):
        return name
    return _ACT_LAYER[name.lower()]


class GammaAct(nn.Module):
    def __init__(self, act_type="relu", gamma: float = 1.0, inplace=False):
        super().__init__()
        self.act_fn = get_act_fn(act_type)
        self.gamma = gamma
        self.inplace = inplace

    def forward(self, x):
        return self.act_fn(x, inplace=self.inplace).mul_(self.gamma)


def act_with_gamma(act_type, gamma=1.0):
    def _create(inplace=False):
        return GammaAct(act_type, gamma=gamma, inplace=inplace)
    return _create


class StdConv2d(nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, eps=1e-6):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=True)
        self.eps = eps

    def forward(self, x):
        weight = F.batch_norm(self.weight.reshape(1, self.out_channels, -1), None, None, training=True,
                              momentum=0.0, eps=self.eps).reshape_as(self.weight)
        return F.conv2d(x, weight, self.bias, self.stride, self.padding)


class NFBlock(nn.Module):
    def __init__(self, chs, act_layer, conv_layer, alpha=0.2, beta=1.0):
        super().__init__()
        self.alpha, self.beta = alpha, beta
        self.act1 = act_layer()
        self.conv1 = conv_layer(chs, chs, 3, padding=1)
        self.act2 = act_layer(inplace=True)
        self.conv2 = conv_layer(chs, chs, 1)

    def forward(self, x):
        out = self.act1(x) * self.beta
        out = self.conv1(out)
        out = self.conv2(self.act2(out))
        return out * self.alpha + x


class RegistryActNet(nn.Module):
    def __init__(self, num_classes=10, width=8):
        super().__init__()
        conv_layer = partial(StdConv2d, eps=1e-5)
        self.stem = conv_layer(3, width, 3, stride=2, padding=1)
        blocks = []
        for act in ("silu", "swish_me", "mish", "odd"):
            blocks.append(NFBlock(width, get_act_layer(act), conv_layer))
        blocks.append(NFBlock(width, act_with_gamma("silu", gamma=1.7), conv_layer))
        blocks.append(NFBlock(width, act_with_gamma("gelu", gamma=1.1), conv_layer))
        self.blocks = nn.Sequential(*blocks)
        self.final_act = act_with_gamma("relu", gamma=1.4)()
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        x = self.final_act(self.blocks(self.stem(x)))
        return self.head(x.mean((2, 3)))
