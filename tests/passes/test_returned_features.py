"""A dict of features a block returns by name (torchvision's IntermediateLayerGetter: `out = OrderedDict()`,
`out[name] = x`, `return out`) keeps its images channels-last.

Dicts kept torch's layout: every stage of the getter converted around itself (its children, read from
`model.named_children()`, run by `call_module`), and each reader converted back (a getter of two stages of a
ResNet: 17 Transposes; torchvision's LR-ASPP 37, FCN 18). Now the body's table is decided by its first stored value
(passes/statements.py `returned_features`) and reaches callers as a `HeldTable` (porter/ir/lists.py): read by key
as it lies (`features["out"]`), handed as it lies to a block translated for it (LR-ASPP's head reading
`input["low"]`; timm's FeatureListNet's `list(d.values())` as a list of them), and in torch's layout for any other
reader (`d.items()`, a call not translated for it) and at the model's boundary. A factory's local constructions are what it hands a class (`backbone = Getter(...)`, then
`Model(backbone, head)`), also for a subclass keeping its base's constructor (torchvision's `FCN`). Each port matches
torch for drawn sizes, batch 1 included, and converts only at its boundary.
"""

import textwrap

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.frontend.names import dict_never_changed, keyed_depth
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

PRELUDE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from collections import OrderedDict


def stage(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class Trunk(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = stage(3, 8, 2)
        self.layer1 = stage(8, 8, 1)
        self.layer2 = stage(8, 16, 2)
        self.layer3 = stage(16, 24, 2)
        self.fc = nn.Linear(24, 10)


class Getter(nn.ModuleDict):
    """torchvision's IntermediateLayerGetter, as it is written."""

    def __init__(self, model, return_layers):
        orig_return_layers = return_layers
        return_layers = {str(k): str(v) for k, v in return_layers.items()}
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            if name in return_layers:
                del return_layers[name]
            if not return_layers:
                break
        super().__init__(layers)
        self.return_layers = orig_return_layers

    def forward(self, x):
        out = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out_name = self.return_layers[name]
                out[out_name] = x
        return out
'''

SOURCES = {
    # read by key
    "keys": PRELUDE + '''
class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Getter(Trunk(), return_layers={"layer1": "c2", "layer3": "c4"})
        self.out = nn.Conv2d(8 + 24, 5, 1)

    def forward(self, x):
        feats = self.body(x)
        c2, c4 = feats["c2"], feats["c4"]
        c4 = F.interpolate(c4, size=c2.shape[-2:], mode="bilinear", align_corners=False)
        return self.out(torch.cat([c2, c4], 1))
''',
    # handed to a head that reads it by key; a base class's constructor kept by a subclass, built by a factory
    "handed": PRELUDE + '''
class Head(nn.Module):
    def __init__(self, low, high, n):
        super().__init__()
        self.low = nn.Conv2d(low, n, 1)
        self.high = nn.Sequential(nn.Conv2d(high, n, 1), nn.BatchNorm2d(n), nn.ReLU())

    def forward(self, features):
        low, high = features["low"], features["high"]
        high = F.interpolate(self.high(high), size=low.shape[-2:], mode="bilinear", align_corners=False)
        return self.low(low) + high


class Segmenter(nn.Module):
    def __init__(self, backbone, head):
        super().__init__()
        self.backbone = backbone
        self.head = head

    def forward(self, x):
        size = x.shape[-2:]
        features = self.backbone(x)
        out = F.interpolate(self.head(features), size=size, mode="bilinear", align_corners=False)
        return out


class Lite(Segmenter):
    pass


def lite(n=4):
    backbone = Getter(Trunk(), {"layer1": "low", "layer3": "high"})
    head = Head(8, 24, n)
    return Lite(backbone, head)


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = lite()

    def forward(self, x):
        return self.net(x)
''',
    # timm's FeatureListNet, as it is written: children added by `self.update`, a method filling the dict in an
    # enumerated loop, the forward returning its values as a list
    "listed": PRELUDE + '''
class FeatureDictNet(nn.ModuleDict):
    def __init__(self, model, out_indices=(1, 3)):
        super().__init__()
        names = [name for name, _ in model.named_children()]
        self.return_layers = {names[i]: str(k) for k, i in enumerate(out_indices)}
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            if name == names[max(out_indices)]:
                break
        self.update(layers)

    def _collect(self, x):
        out = OrderedDict()
        for i, (name, module) in enumerate(self.items()):
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out

    def forward(self, x):
        return self._collect(x)


class FeatureListNet(FeatureDictNet):
    def forward(self, x):
        return list(self._collect(x).values())


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = FeatureListNet(Trunk(), out_indices=(1, 3))
        self.lateral = nn.Conv2d(8, 24, 1)
        self.head = nn.Conv2d(24, 4, 3, padding=1)

    def forward(self, x):
        low, top = self.encoder(x)
        top = F.interpolate(top, size=low.shape[-2:], mode="nearest")
        return self.head(top + self.lateral(low))
''',
    # read whole (its values in torch's layout) and returned as the model's result
    "whole": PRELUDE + '''
class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Getter(Trunk(), {"layer2": "mid", "layer3": "top"})
        self.proj = nn.Conv2d(24, 16, 1)

    def forward(self, x):
        feats = self.body(x)
        pooled = torch.cat([f.mean(dim=(2, 3)) for name, f in feats.items() if name in ("mid", "top")], 1)
        result = OrderedDict()
        result["top"] = self.proj(feats["top"])
        result["pooled"] = pooled[:, :16, None, None] + feats["mid"].amax(dim=(2, 3), keepdim=True)
        return result
''',
}


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(SOURCES[name]),
                                    input_specs=("3,32,32",)))


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.integers(16, 41),
       width=st.integers(16, 41), name=st.sampled_from(sorted(SOURCES)))
def test_port_matches_torch(pairs, seed, batch, height, width, name):
    assert_same_outputs(pairs(name), [random_input(seed, (batch, 3, height, width))], tolerance=1e-4)


@pytest.mark.parametrize("name", ["keys", "handed", "listed"])
def test_features_stay_channels_last(pairs, name):
    from porter.verify.harness import count_transposes

    inputs = [random_input(0, (2, 3, 32, 32))]
    assert_same_outputs(pairs(name), inputs, tolerance=1e-4, jit=True)
    assert count_transposes(pairs(name).keras_model, inputs) <= 2


def test_other_readers_see_torch_layout(pairs):
    """`feats.items()` is read in torch's layout (`each_image(to_channels_first, feats)`), by key as it lies; the
    model's dict result goes out through `self.io_output`."""
    code = (pairs("whole").out_dir / "op_model_keras.py").read_text().split("class OpModel", 1)[1]
    assert "each_image(to_channels_first, feats).items()" in code
    assert 'self.proj(feats["top"]' in code
    assert "each_image(self.io_output, result)" in code


def _body(source, function):
    module = cst.parse_module(textwrap.dedent(source))
    return next(s for s in module.body if getattr(s, "name", None) and s.name.value == function).body


def test_a_returned_table_is_keyed_and_an_unchanged_dict_is_held():
    body = _body('''
        def forward(x):
            out = OrderedDict()
            out["a"] = x
            return out
    ''', "forward")
    assert keyed_depth(body, "out") == 1
    grid = _body('''
        def forward(x):
            grid = [[None] * 2 for _ in range(2)]
            grid[0][0] = x
            return grid
    ''', "forward")
    assert keyed_depth(grid, "grid") is None  # (a table of depth 2 is not returned whole)
    reads = _body('''
        def forward(self, x):
            f = self.body(x)
            y = self.head(f) + f["a"]
            return [v for v in f.values()], y
    ''', "forward")
    assert dict_never_changed(reads, "f")
    for change in ('f["b"] = x', 'del f["a"]', "f.update(a=x)", "f.pop('a')", "f = {}"):
        changed = _body(f'''
            def forward(self, x):
                f = self.body(x)
                {change}
                return f["a"]
        ''', "forward")
        assert not dict_never_changed(changed, "f"), change
