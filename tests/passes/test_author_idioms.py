"""Idioms of detection and segmentation codebases that broke ports (held-out YOLOv8, mmcv, detectron2, HarDNet):

- ultralytics' C2f: `y = list(self.cv1(x).chunk(2, 1)); y.extend(m(y[-1]) for m in self.m)` on a block whose rank
  porter cannot tell (its activation is a class attribute): the chunk was a stub (exit 1), and the generator was
  wrapped in `tuple(...)`, so every `m` read the first chunk instead of the item appended before it;
- mmcv's ConvModule: `self.norm(x)` through a `@property` returning `getattr(self, self.norm_name)` was called as a
  method on torch-order images (GroupNorm on the wrong axis), `res_layer = getattr(self, name); res_layer(x)` too;
  `for p in layer.parameters(): p.requires_grad = False` raised AttributeError when built;
- detectron2's `Conv2d(nn.Conv2d)` keeping `self.norm = norm`: the norm's weights were unexpected keys; features
  kept in a dict (`outputs[name] = x`) and layers in plain lists (`self.lateral_convs[0](x)`, `lateral_conv(x)` in a
  zip) were handed over in the wrong layout;
- HarDNet's `ConvLayer(nn.Sequential)` whose forward is `super().forward(x)`: laid out in torch's order with a
  Transpose either side of every layer.
Each port now matches torch (eagerly and under XLA) on drawn batches and sizes.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs, random_input

C2F = '''
import torch
import torch.nn as nn


class Conv(nn.Module):
    default_act = nn.SiLU()

    def __init__(self, c1, c2, k=1, s=1, act=True):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = self.default_act if act is True else act if isinstance(act, nn.Module) else nn.Identity()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Net(nn.Module):
    def __init__(self, how="chunk", c=4, n=2):
        super().__init__()
        self.how = how
        self.c = c
        self.cv1 = Conv(3, 2 * c, 1, 1)
        self.m = nn.ModuleList(Conv(c, c, 3) for _ in range(n))
        self.cv2 = Conv((2 + n) * c, 5, 1)

    def forward(self, x):
        if self.how == "chunk":
            y = list(self.cv1(x).chunk(2, 1))
        else:
            y = list(self.cv1(x).split((self.c, self.c), 1))
        y.extend(m(y[-1]) for m in self.m)
        return self.cv2(torch.cat(y, 1))
'''

MMCV = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

NORMS = {"BN": nn.BatchNorm2d, "GN": nn.GroupNorm}


def build_norm_layer(cfg, num_features):
    cfg_ = cfg.copy()
    layer_type = cfg_.pop("type")
    if layer_type == "GN":
        layer = NORMS[layer_type](num_channels=num_features, **cfg_)
    else:
        layer = NORMS[layer_type](num_features, **cfg_)
    for param in layer.parameters():
        param.requires_grad = False
    return layer_type.lower(), layer


class ConvModule(nn.Module):
    def __init__(self, cin, cout, k, norm_cfg, order=("conv", "norm", "act")):
        super().__init__()
        self.order = order
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2)
        norm_channels = cout if order.index("norm") > order.index("conv") else cin
        self.norm_name, norm = build_norm_layer(norm_cfg, norm_channels)
        self.add_module(self.norm_name, norm)
        self.activate = nn.ReLU()

    @property
    def norm(self):
        return getattr(self, self.norm_name)

    def forward(self, x):
        for layer in self.order:
            if layer == "conv":
                x = self.conv(x)
            elif layer == "norm":
                x = self.norm(x)
            else:
                x = self.activate(x)
        return x


class Net(nn.Module):
    def __init__(self, norm="GN"):
        super().__init__()
        cfg = dict(type="GN", num_groups=3) if norm == "GN" else dict(type="BN")
        self.stem = ConvModule(3, 6, 3, cfg, order=("norm", "conv", "act"))
        self.layer_names = []
        for i in range(2):
            self.add_module(f"layer{i + 1}", ConvModule(6, 6, 3, dict(type="BN")))
            self.layer_names.append(f"layer{i + 1}")

    def forward(self, x):
        x = self.stem(x)
        for name in self.layer_names:
            res_layer = getattr(self, name)
            x = res_layer(x)
        return x
'''

DETECTRON = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv2d(nn.Conv2d):
    def __init__(self, *args, **kwargs):
        norm = kwargs.pop("norm", None)
        super().__init__(*args, **kwargs)
        self.norm = norm

    def forward(self, x):
        x = F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
        if self.norm is not None:
            x = self.norm(x)
        return x


class Net(nn.Module):
    def __init__(self, norm="GN"):
        super().__init__()
        make = (lambda c: nn.GroupNorm(2, c)) if norm == "GN" else nn.BatchNorm2d
        self.res2 = Conv2d(3, 4, 3, padding=1, norm=make(4))
        self.res3 = Conv2d(4, 6, 3, stride=2, padding=1, norm=make(6))
        self.names = ["res2", "res3"]
        laterals = []
        for c in (4, 6):
            lateral = Conv2d(c, 4, 1, norm=make(4))
            self.add_module("lateral{}".format(c), lateral)
            laterals.append(lateral)
        self.laterals = laterals[::-1]

    def bottom_up(self, x):
        outputs = {}
        for name in self.names:
            x = getattr(self, name)(x)
            outputs[name] = x
        return outputs

    def forward(self, x):
        features = self.bottom_up(x)
        prev = self.laterals[0](features[self.names[-1]])
        results = [prev]
        for idx, lateral in enumerate(self.laterals):
            if idx > 0:
                f = features[self.names[-idx - 1]]
                prev = lateral(f) + F.interpolate(prev, size=f.shape[-2:], mode="nearest")
                results.insert(0, prev)
        return results[0]
'''

HARDNET = '''
import torch
import torch.nn as nn


class ConvLayer(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel=3, stride=1):
        super().__init__()
        self.add_module("conv", nn.Conv2d(in_channels, out_channels, kernel, stride, kernel // 2, bias=False))
        self.add_module("norm", nn.BatchNorm2d(out_channels))
        self.add_module("relu", nn.ReLU6(True))

    def forward(self, x):
        return super().forward(x)


class Net(nn.Module):
    def __init__(self, depth=3):
        super().__init__()
        self.base = nn.ModuleList([ConvLayer(3, 6, stride=2)])
        for _ in range(depth):
            self.base.append(ConvLayer(6, 6))

    def forward(self, x):
        for layer in self.base:
            x = layer(x)
        return x
'''


@pytest.fixture(scope="module")
def c2f(tmp_path_factory):
    return snippet_ports(tmp_path_factory, C2F, "3,6,6", "how")


@pytest.fixture(scope="module")
def mmcv(tmp_path_factory):
    return snippet_ports(tmp_path_factory, MMCV, "3,6,6", "norm")


@pytest.fixture(scope="module")
def detectron(tmp_path_factory):
    return snippet_ports(tmp_path_factory, DETECTRON, "3,8,8", "norm")


@pytest.fixture(scope="module")
def hardnet(tmp_path_factory):
    return snippet_ports(tmp_path_factory, HARDNET, "3,8,8")


def _matches(out, seed, shape, **init_args):
    pair = PortedPair(out, seed=seed, init_args=init_args)
    x = random_input(seed, shape)
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
    return pair, x


_sizes = st.tuples(st.integers(1, 3), st.integers(3, 9), st.integers(3, 9))


@settings(max_examples=4, deadline=None)
@given(how=st.sampled_from(["chunk", "split"]), sizes=_sizes, seed=st.integers(0, 99))
def test_c2f_extends_its_list_item_by_item_channels_last(c2f, how, sizes, seed):
    batch, h, w = sizes
    pair, x = _matches(c2f(how), seed, (batch, 3, h, w), how=how)
    text = (c2f(how) / "op_model_keras.py").read_text()
    assert "tuple(" not in text.split("def call")[2]  # the generator stays lazy
    assert count_transposes(pair.keras_model, [x]) <= 2


@settings(max_examples=4, deadline=None)
@given(norm=st.sampled_from(["GN", "BN"]), sizes=_sizes, seed=st.integers(0, 99))
def test_mmcv_conv_module_property_norm_and_getattr_layers(mmcv, norm, sizes, seed):
    batch, h, w = sizes
    pair, x = _matches(mmcv(norm), seed, (batch, 3, h, w), norm=norm)
    assert count_transposes(pair.keras_model, [x]) <= 2
    frozen = pair.keras_model.stem.norm  # `param.requires_grad = False` freezes the norm's variables
    assert frozen.trainable_weights == [] and len(frozen.non_trainable_weights) >= 2


@settings(max_examples=4, deadline=None)
@given(norm=st.sampled_from(["GN", "BN"]), sizes=_sizes, seed=st.integers(0, 99))
def test_detectron_conv_subclass_norm_dict_features_and_layer_lists(detectron, norm, sizes, seed):
    batch, h, w = sizes
    pair, _ = _matches(detectron(norm), seed, (batch, 3, h, w), norm=norm)
    keys = {e.key for e in pair.keras_module.collect_state(pair.keras_model)}
    assert {"res2.norm.weight", "lateral4.norm.bias"} <= keys


@settings(max_examples=3, deadline=None)
@given(sizes=_sizes, seed=st.integers(0, 99))
def test_sequential_subclass_calling_super_forward_runs_channels_last(hardnet, sizes, seed):
    batch, h, w = sizes
    pair, x = _matches(hardnet(None), seed, (batch, 3, h, w))
    assert count_transposes(pair.keras_model, [x]) <= 2
    assert np.isfinite(np.asarray(pair.run_keras([x])[0])).all()
