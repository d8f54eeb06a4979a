"""Dicts of features built in one go (passes/feature_dicts.py): a dict display, `OrderedDict([("a", a), ...])`,
`dict(a=a)`, `dict(zip(names, feats))`, `{k: v for k, v in zip(...)}` and `OrderedDict([(k, v) for k, v in
zip(names, results)])` (torchvision's FeaturePyramidNetwork), of images held channels-last, are held as they lie:
read by key and through `.values()` as they lie, handed so to a block translated for them, in torch's layout for
any other reader. Before, each value was converted where the dict was built and back where it was read (a user
model handing torchvision's FPN two stages: 14 Transposes; resnet18 stages through IntermediateLayerGetter into an
FPN with LastLevelMaxPool: 10). Also: a list of channels-last images that one path of an `if` rebinds to what an
untyped call returns (`results, names = self.extra(results, x, names)`) goes to torch's layout on the other path;
it was left channels-last there while read as torch's after the `if` (a crash, or a wrong result where the sizes
allow). Each port matches torch for drawn sizes, batch 1 included."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.corpus.torchvision_support import import_torchvision
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

PRELUDE = '''
from collections import OrderedDict

import torch
import torch.nn as nn


class Pyramid(nn.Module):
    """An FPN written as torchvision's: the dict unpacked into lists, rebuilt from them at the end."""

    def __init__(self, chans, out, extra=None):
        super().__init__()
        self.inner = nn.ModuleList([nn.Conv2d(c, out, 1) for c in chans])
        self.smooth = nn.ModuleList([nn.Conv2d(out, out, 3, padding=1) for _ in chans])
        self.extra = extra

    def forward(self, x):
        names = list(x.keys())
        x = list(x.values())
        results = []
        for f, conv, smooth in zip(x, self.inner, self.smooth):
            results.append(smooth(conv(f)))
        if self.extra is not None:
            results, names = self.extra(results, x, names)
        return OrderedDict([(k, v) for k, v in zip(names, results)])


class Pool(nn.Module):
    def forward(self, results, x, names):
        names.append("pool")
        results.append(nn.functional.max_pool2d(results[-1], 1, 2, 0))
        return results, names


class Head(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, 2, 3, padding=1)

    def forward(self, feats):
        return sum(self.conv(f).mean((2, 3)) for f in feats.values()) + feats["b"].amax((2, 3))[:, :2]
'''

MODELS = {
    "display": '''
        class OpModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = nn.Conv2d(3, 8, 3, 2, 1)
                self.c2 = nn.Conv2d(8, 16, 3, 2, 1)
                self.fpn = Pyramid([8, 16], 12, extra=Pool())
                self.head = Head(12)

            def forward(self, x):
                a = self.c1(x)
                b = self.c2(a)
                return self.head(self.fpn({"a": a, "b": b}))
    ''',
    "pairs": '''
        class OpModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = nn.Conv2d(3, 8, 3, 2, 1)
                self.c2 = nn.Conv2d(8, 16, 3, 2, 1)
                self.fpn = Pyramid([8, 16, 16], 12, extra=Pool())
                self.head = Head(12)

            def forward(self, x):
                a = self.c1(x)
                b = self.c2(a)
                feats = self.fpn(OrderedDict([("a", a), ("b", b), ("c", b * 2)]))
                return self.head(feats)
    ''',
    "keywords": '''
        class OpModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = nn.Conv2d(3, 8, 3, 2, 1)
                self.c2 = nn.Conv2d(8, 12, 3, 2, 1)
                self.head = Head(12)

            def forward(self, x):
                a = self.c1(x)
                return self.head(dict(a=self.c2(a), b=self.c2(a).relu()))
    ''',
    "no_extra": '''
        class OpModel(nn.Module):
            """The FPN's `if self.extra is not None:` rebinds its list of channels-last images to what an untyped
            call returns: on the other path the list goes to torch's layout (it was read so, left channels-last)."""

            def __init__(self):
                super().__init__()
                self.c1 = nn.Conv2d(3, 8, 3, 2, 1)
                self.c2 = nn.Conv2d(8, 16, 3, 2, 1)
                self.fpn = Pyramid([8, 16], 12)

            def forward(self, x):
                a = self.c1(x)
                feats = self.fpn({"a": a, "b": self.c2(a)})
                return feats["a"].mean((2, 3)) + feats["b"].amax((2, 3))
    ''',
    "zipped": '''
        class OpModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.stages = nn.ModuleList([nn.Conv2d(3, 12, 3, 2, 1), nn.Conv2d(12, 12, 3, 2, 1)])
                self.head = Head(12)

            def forward(self, x):
                feats = []
                for stage in self.stages:
                    x = stage(x)
                    feats.append(x)
                by_name = dict(zip(["a", "b"], feats))
                again = {k: v * 2 for k, v in zip(["a", "b"], feats)}
                return self.head(by_name) + self.head(again)
    ''',
}

TORCHVISION = '''
import torch
import torch.nn as nn
from torchvision.models import resnet18
from torchvision.models._utils import IntermediateLayerGetter
from torchvision.ops import FeaturePyramidNetwork
from torchvision.ops.feature_pyramid_network import LastLevelMaxPool


class OpModel(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.body = IntermediateLayerGetter(resnet18(), {"layer2": "p3", "layer3": "p4", "layer4": "p5"})
        self.fpn = FeaturePyramidNetwork([128, 256, 512], 16, extra_blocks=LastLevelMaxPool())
        self.cls = nn.Conv2d(16, num_classes, 3, padding=1)

    def forward(self, x):
        feats = self.fpn(self.body(x))
        return torch.cat([self.cls(f).flatten(2) for f in feats.values()], 2)
'''


def _source(name):
    return TORCHVISION if name == "torchvision" else PRELUDE + textwrap.dedent(MODELS[name])


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), _source(name), input_specs=("3,33,29",)))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.integers(9, 31), width=st.integers(9, 31),
       name=st.sampled_from(sorted(MODELS)))
def test_port_matches_torch(pairs, seed, batch, height, width, name):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pairs(name), [x], tolerance=1e-4)


@pytest.mark.parametrize("name", sorted(set(MODELS) - {"no_extra"}))  # (its `if` converts on one path)
def test_features_stay_channels_last(pairs, name):
    pair = pairs(name)
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 33, 29))) <= 2


def test_torchvisions_fpn_on_a_getter_converts_only_at_the_boundary(pairs):
    if import_torchvision() is None:
        pytest.skip("torchvision is not installed (scripts/setup.sh)")
    pair = pairs("torchvision")
    x = random_input(3, (1, 3, 67, 61))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert xla_transposes(pair.keras_model, x) <= 2  # (was 10)
