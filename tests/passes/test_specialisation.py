"""Class specialisation: a module class whose forward depends on literal constructor values it stores on self gets
a case of `call` per value the model builds it with (each in the layouts its callers hand it), a class used in two
layouts a case for each, and block classes reached through config objects, Sequential subclasses and helper
methods are followed, so a convnet made of them traces no Transpose but at its boundary."""

from pathlib import Path

import numpy as np
import torch

from porter.verify.harness import count_transposes
from tests.rules.op_ports import port

REDUCE = '''
import torch
from torch import nn


class Reduce(nn.Module):
    """Mean over one dim (kept), chosen at construction."""

    def __init__(self, dim, keep=True):
        super().__init__()
        self.dim = dim
        self.keep = keep

    def forward(self, x):
        return x.mean(self.dim, keepdim=self.keep)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.over_channels = Reduce(1)
        self.over_rows = Reduce(dim=2)
        self.conv2 = nn.Conv2d(1, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return self.conv2(self.over_channels(y)) + self.over_rows(y).mean(1, keepdim=True)
'''

CONFIGS = '''
import torch
from torch import nn


class Plain(nn.Module):
    def __init__(self, spec):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(spec.width, spec.width, 3, padding=1), nn.BatchNorm2d(spec.width))

    def forward(self, x):
        return torch.relu(x + self.body(x))


class Gated(nn.Module):
    def __init__(self, spec):
        super().__init__()
        self.conv = nn.Conv2d(spec.width, spec.width, 1)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        return x * self._gate(x)

    def _gate(self, x):
        return torch.sigmoid(self.conv(self.pool(x)))


class PlainSpec:
    def __init__(self, width):
        self.width = width
        self.unit = Plain


class GatedSpec:
    def __init__(self, width):
        self.width = width
        self.unit = Gated


class Stage(nn.Sequential):
    def __init__(self, unit_cls, spec, count):
        super().__init__()
        for index in range(count):
            self.add_module(f"unit{index}", unit_cls(spec))


class Net(nn.Module):
    def __init__(self, specs=None):
        super().__init__()
        specs = specs or [PlainSpec(4), GatedSpec(4)]
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.units = nn.Sequential(*[spec.unit(spec) for spec in specs])
        self.stage = Stage(Plain, PlainSpec(4), 2)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        x = self.stage(self.units(self.stem(x)))
        return self.head(x.mean((2, 3)))
'''


def _check(pair, torch_model, keras_model, shape):
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, value in torch_model.state_dict().items():
            if value.dtype.is_floating_point:
                value.copy_(value.abs() + 0.5 if "running_var" in name else
                            value + 0.1 * torch.randn(value.shape, generator=generator))
    torch_model.eval()
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    keras_model(x)
    pair.keras_module.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    got = np.asarray(keras_model(x, training=False))
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() <= 1e-4 * np.abs(expected).max()
    return count_transposes(keras_model, [x])


def test_a_class_built_with_two_literal_values_gets_a_case_of_call_for_each(tmp_path):
    pair = port(tmp_path, REDUCE, input_specs=("3,6,6",))
    code = (tmp_path / "out" / "op_model_keras.py").read_text()
    assert "if (self.dim, self.keep) == (1, True):" in code and "if (self.dim, self.keep) == (2, True):" in code
    assert "def __init__(self, dim, keep=True, **kwargs):" in code  # the user's constructor, unchanged
    transposes = _check(pair, pair.torch_module.Net(), pair.keras_module.Net(), (2, 3, 6, 6))
    assert transposes <= 2


def test_block_classes_from_config_objects_sequential_subclasses_and_helper_methods(tmp_path):
    pair = port(tmp_path, CONFIGS, input_specs=("3,6,6",))
    code = (tmp_path / "out" / "op_model_keras.py").read_text()
    assert "call_module" not in code
    transposes = _check(pair, pair.torch_module.Net(), pair.keras_module.Net(), (2, 3, 6, 6))
    assert transposes <= 1  # on entry only: the head reads a (N, C) mean


def test_a_class_used_in_two_layouts_gets_a_case_for_each(tmp_path):
    """DropPath runs after convolutions (channels-last) and after a token MLP (torch's order): the owner tells the
    second instance its layouts, its call has a case for them, and the helper function a second translation."""
    source = (Path(__file__).resolve().parents[1] / "models" / "two_layouts.py").read_text()
    pair = port(tmp_path, source, input_specs=("3,8,8",))
    code = (tmp_path / "out" / "op_model_keras.py").read_text()
    assert 'self.token_drop.porter_layout, self.token_drop.layout_out = "source", "source"' in code
    assert 'if self.porter_layout == "source":' in code and "def drop_path_torch_order(" in code
    assert "self.conv_drop.porter_layout" not in code  # the first layout is the class's own
    transposes = _check(pair, pair.torch_module.TwoLayoutNet(), pair.keras_module.TwoLayoutNet(), (2, 3, 8, 8))
    assert transposes <= 2


SUBCLASSED = '''
import torch
from torch import nn


class Reorder(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        return x.permute(*self.dims)


class ScaledReorder(Reorder):
    def __init__(self, dims, scale=2.0):
        super().__init__(dims)
        self.scale = scale

    def forward(self, x):
        return x.permute(*self.dims) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.to_tokens = Reorder([0, 2, 3, 1])
        self.norm = nn.LayerNorm(4)
        self.to_maps = ScaledReorder([0, 3, 1, 2])
        self.conv2 = nn.Conv2d(4, 2, 1)

    def forward(self, x):
        return self.conv2(self.to_maps(self.norm(self.to_tokens(self.conv(x)))))
'''


def test_a_class_with_subclasses_is_not_specialised_and_still_matches(tmp_path):
    """Per-instance layouts set in a base's __init__ would reach the subclass, whose call does not follow them:
    such a class keeps one translation (its callers convert)."""
    pair = port(tmp_path, SUBCLASSED, input_specs=("3,6,6",))
    code = (tmp_path / "out" / "op_model_keras.py").read_text()
    assert "porter: `call` specialised" not in code
    _check(pair, pair.torch_module.Net(), pair.keras_module.Net(), (2, 3, 6, 6))
