"""`if isinstance(layer, Kind):` inside a loop over a ModuleList of mixed layers (Jasper/QuartzNet blocks: `if
isinstance(l, MaskedConv1d): out, lens = l((out, lens))` else `out = l(out)`): in each branch the layer is one of
the kinds the test admits (passes/isinstance_narrowing.py), so each call is laid out for what it can be, not run
through `call_module` in torch's layout (a round trip per layer before). A test porter cannot decide for every kind
narrows nothing. The ports match torch eagerly and under XLA and trace the input's Transpose only."""

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.frontend.source import parse_source
from porter.ir.values import ModuleRef, Value
from porter.passes.isinstance_narrowing import isinstance_narrowing
from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.proj = nn.Conv2d(channels, channels, 1)

    def forward(self, x, scale):
        return x * torch.sigmoid(self.proj(x)) * scale


class ScaledConv(nn.Conv2d):
    def forward(self, x):
        return super().forward(x) * 0.5


class Net(nn.Module):
    def __init__(self, width=6):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.layers = nn.ModuleList([nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), Gate(width),
                                     ScaledConv(width, width, 3, padding=1), nn.ReLU(), Gate(width)])
        self.head = nn.Linear(width, 4)

    def forward(self, x):
        x = self.stem(x)
        for i, layer in enumerate(self.layers):
            if isinstance(layer, Gate):
                x = layer(x, 1.0 + i)
            elif isinstance(layer, (nn.Conv2d, nn.BatchNorm2d)):
                x = layer(x) + 0.1
            else:
                x = layer(x)
        return self.head(x.mean((2, 3)))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("narrowing"), SOURCE, input_specs=("3,9,9",))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([5, 9]), width=st.sampled_from([4, 9]),
       seed=st.integers(0, 2**16))
def test_narrowed_layers_match_torch(pair, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
    assert count_transposes(pair.keras_model, [x]) == 1


def test_each_branch_takes_the_image_as_it_lies(pair):
    import inspect

    code = inspect.getsource(pair.keras_module.Net.call)
    assert "x = layer(x, scale=1.0 + i, training=training)" in code and "to_channels" not in code, code


def test_undecidable_tests_narrow_nothing(tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    source = parse_source(tmp_path / "m.py")
    gate = ModuleRef("class", class_name="Gate")
    layer = Value("layer", "module", module=ModuleRef("unknown", alternatives=(gate, ModuleRef("unknown"))))
    test = cst.parse_expression("isinstance(layer, Gate)")
    assert isinstance_narrowing(test, {"layer": layer}, source) is None  # (an unknown kind may be a Gate)
    test = cst.parse_expression("isinstance(layer, nn.modules.lazy.LazyModuleMixin)")
    scaled = ModuleRef("class", class_name="ScaledConv")
    known = Value("layer", "module", module=ModuleRef("unknown", alternatives=(gate, scaled)))
    assert isinstance_narrowing(test, {"layer": known}, source) is None  # (a base no rule names)
    # torch's private layer bases name the layers deriving from them (rules/constants.py TORCH_BASE_CLASSES)
    name, body, other = isinstance_narrowing(cst.parse_expression("isinstance(layer, nn.modules.conv._ConvNd)"),
                                             {"layer": known}, source)
    assert (name, body.module, other.module) == ("layer", scaled, gate)
    name, body, other = isinstance_narrowing(cst.parse_expression("isinstance(layer, Gate)"), {"layer": known},
                                             source)
    assert (name, body.module, other.module) == ("layer", gate, ModuleRef("class", class_name="ScaledConv"))
