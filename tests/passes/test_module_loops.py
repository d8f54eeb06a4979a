"""Layers a constructor builds through a factory function and loops over dicts of layers, laid out for the whole
model: `norm_act=bn_relu` (a function returning a Sequential, handed as a parameter default and called
`norm_act(channels)`), a Sequential built from an OrderedDict of `(name, layer)` pairs that `+` and slices
rearrange, and containers filled in a loop over a dict (`.keys()` with `d[key]`, `.values()`, `.items()` with
`add_module(name, layer)`, on a held Sequential or in an nn.Sequential subclass's own constructor). Each child is
known, so every call is a plain channels-last call (no Transpose beyond the boundary's); the port matches torch
(eager and XLA) for hypothesis-drawn widths, sizes and batches, and the Gluon version (HybridSequential filled by
`add` in loops over an OrderedDict) matches real mxnet 1.9.1.

The snippet is GluonCV's WiderResNetA2 (IdentityResidualBlock) written with torch, cut down to a few layers.
"""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.mxnet.gluon_fixtures import needs_mxnet, port_gluon_snippet
from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

SOURCE = '''
from collections import OrderedDict
from functools import partial

import torch
import torch.nn as nn


def bn_relu(channels, norm_layer=nn.BatchNorm2d):
    return nn.Sequential(norm_layer(channels), nn.ReLU(inplace=True))


class Block(nn.Module):
    def __init__(self, cin, cout, norm_act=bn_relu, dropout=None, bottleneck=False):
        super().__init__()
        self.bn1 = norm_act(cin)
        if not bottleneck:
            layers = [("conv1", nn.Conv2d(cin, cout, 3, padding=1, bias=False)),
                      ("bn2", norm_act(cout)),
                      ("conv2", nn.Conv2d(cout, cout, 3, padding=1, bias=False))]
            if dropout is not None:
                layers = layers[0:2] + [("dropout", dropout())] + layers[2:]
        else:
            layers = [("conv1", nn.Conv2d(cin, cout, 1, bias=False)),
                      ("bn2", norm_act(cout)),
                      ("conv2", nn.Conv2d(cout, cout, 3, padding=1, groups=cout, bias=False)),
                      ("bn3", norm_act(cout)),
                      ("conv3", nn.Conv2d(cout, cout, 1, bias=False))]
        self.convs = nn.Sequential(OrderedDict(layers))
        if cin != cout:
            self.proj = nn.Conv2d(cin, cout, 1, bias=False)

    def forward(self, x):
        if hasattr(self, "proj"):
            bn1 = self.bn1(x)
            shortcut = self.proj(bn1)
        else:
            shortcut = x
            bn1 = self.bn1(x)
        return self.convs(bn1) + shortcut


class Stage(nn.Module):
    def __init__(self, cin, cout, norm_act=bn_relu):
        super().__init__()
        blocks = OrderedDict()
        blocks["block1"] = Block(cin, cout, norm_act=norm_act, dropout=partial(nn.Dropout, p=0.3))
        blocks["block2"] = Block(cout, cout, norm_act=norm_act, bottleneck=True)
        self.blocks = nn.Sequential()
        for name, block in blocks.items():
            self.blocks.add_module(name, block)
        tail = OrderedDict([("conv", nn.Conv2d(cout, cout, 1)), ("act", nn.ReLU())])
        self.tail = nn.ModuleList()
        for layer in tail.values():
            self.tail.append(layer)

    def forward(self, x):
        x = self.blocks(x)
        for layer in self.tail:
            x = layer(x)
        return x


class Head(nn.Sequential):
    def __init__(self, channels, norm_act=bn_relu):
        super().__init__()
        layers = OrderedDict()
        layers["norm"] = norm_act(channels)
        layers["pool"] = nn.AdaptiveAvgPool2d(1)
        layers["flat"] = nn.Flatten()
        for name, layer in layers.items():
            self.add_module(name, layer)


class Net(nn.Module):
    def __init__(self, width=4, norm_act=bn_relu):
        super().__init__()
        norm_act = bn_relu
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.stage = Stage(width, 2 * width, norm_act=norm_act)
        self.out = norm_act(2 * width)
        mid = OrderedDict([("conv", nn.Conv2d(2 * width, 2 * width, 1)), ("act", nn.ReLU())])
        self.mid = nn.Sequential()
        for key in mid.keys():
            self.mid.add_module(key, mid[key])
        self.head = Head(2 * width)

    def forward(self, x):
        return self.head(self.mid(self.out(self.stage(self.stem(x)))))
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {"wider_resnet": SOURCE})


@settings(max_examples=3, deadline=None)
@given(width=st.integers(1, 6), batch=st.integers(1, 2), size=st.integers(4, 9), seed=st.integers(0, 2**16))
def test_factory_and_dict_loop_layers_match_torch_and_convert_only_at_the_boundary(ported, width, batch, size, seed):
    pair = PortedPair(ported("wider_resnet").out_dir, init_args={"width": width}, seed=seed)
    x = random_input(seed, (batch, 3, size, size))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 2


GLUON_SOURCE = '''
from collections import OrderedDict

from mxnet.gluon import nn


def bnrelu(channels, norm_layer=nn.BatchNorm, norm_kwargs=None):
    out = nn.HybridSequential(prefix='')
    out.add(norm_layer(in_channels=channels, **({} if norm_kwargs is None else norm_kwargs)))
    out.add(nn.Activation('relu'))
    return out


class Block(nn.HybridBlock):
    def __init__(self, in_channels, channels, norm_act=bnrelu, **kwargs):
        super(Block, self).__init__(**kwargs)
        self.bn1 = norm_act(in_channels)
        layers = [("conv1", nn.Conv2D(channels, 3, padding=1, in_channels=in_channels, use_bias=False)),
                  ("bn2", norm_act(channels)),
                  ("conv2", nn.Conv2D(channels, 3, padding=1, in_channels=channels, use_bias=False))]
        layer_dict = OrderedDict(layers)
        self.convs = nn.HybridSequential(prefix='')
        for key in layer_dict.keys():
            self.convs.add(layer_dict[key])
        self.proj_conv = nn.Conv2D(channels, 1, in_channels=in_channels, use_bias=False)

    def hybrid_forward(self, F, x):
        bn1 = self.bn1(x)
        return self.convs(bn1) + self.proj_conv(bn1)


class Net(nn.HybridBlock):
    def __init__(self, width=4, norm_act=bnrelu, classes=10, **kwargs):
        super(Net, self).__init__(**kwargs)
        self.stem = nn.Conv2D(width, 3, padding=1, in_channels=3)
        blocks = []
        for i in range(2):
            blocks.append(("block%d" % (i + 1), Block(width * (i + 1), width * (i + 2), norm_act=norm_act)))
        self.body = nn.HybridSequential(prefix='')
        for name, block in OrderedDict(blocks).items():
            self.body.add(block)
        head = OrderedDict([("bn", norm_act(width * 3)), ("pool", nn.GlobalAvgPool2D())])
        self.head = nn.HybridSequential(prefix='')
        for layer in head.values():
            self.head.add(layer)
        self.output = nn.Dense(classes, in_units=width * 3)

    def hybrid_forward(self, F, x):
        return self.output(self.head(self.body(self.stem(x))))
'''


@needs_mxnet
def test_gluon_factory_and_dict_loop_layers_match_mxnet_without_transposes(tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    model = port_gluon_snippet(tmp_path, GLUON_SOURCE, "Net", x)
    assert count_transposes(model, [x]) <= 2
