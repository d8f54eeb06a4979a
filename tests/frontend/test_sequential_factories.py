"""A model a function builds as an `nn.Sequential` (`def make_model(num_classes=10): return nn.Sequential(...)`),
in a file with no module class: porter said "no nn.Module subclass found" (exit 2). The function is read as the
constructor of an `nn.Sequential` subclass of its own (frontend/sequential_factories.py); the port gets that class and
a function of the factory's name building it, torch's side the source's own function, the children keeping their
names (torch's state_dict loads as it is). Forms: the call returned directly, through a local name, built from a list
the function fills, an OrderedDict of named children, builder helpers of the file (`conv_bn(3, width)`), a module
constant as a default; `--class` naming the factory among classes; the example input inferred from the first layer.
Compared with torch for hypothesis-drawn sizes, batch 1 included."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.convert import ConvertOptions, convert
from porter.errors import UsageError
from porter.output import write_tree
from porter.verify.harness import PortedPair
from tests.rules.op_ports import assert_same_outputs, random_input

SOURCES = {
    "direct": '''
import torch.nn as nn


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


def make_model(num_classes=10, width=8):
    return nn.Sequential(
        conv_bn(3, width), conv_bn(width, 2 * width, 2), conv_bn(2 * width, 2 * width),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * width, num_classes))
''',
    "named": '''
from collections import OrderedDict

import torch.nn as nn

NUM_CLASSES = 7


def build(depth=2, width=12, num_classes=NUM_CLASSES):
    layers = [nn.Conv2d(3, width, 2, 2)]
    for _ in range(depth):
        layers += [nn.BatchNorm2d(width), nn.Conv2d(width, width, 3, padding=1, groups=width), nn.GELU()]
    model = nn.Sequential(OrderedDict([
        ("body", nn.Sequential(*layers)),
        ("pool", nn.AdaptiveAvgPool2d((1, 1))),
        ("flat", nn.Flatten()),
        ("head", nn.Linear(width, num_classes)),
    ]))
    return model
''',
}


def convert_source(folder, text, *extra):
    path = folder / "model.py"
    path.write_text(text)
    options = ConvertOptions(path, folder / "out", class_name=extra[0] if extra else None)
    conversion = convert(options)
    assert conversion.exit_code == 0, conversion.manifest
    write_tree(folder / "out", conversion.files)
    return folder / "out"


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = PortedPair(convert_source(tmp_path_factory.mktemp(name), SOURCES[name]))
        return cache[name]

    return get


@pytest.mark.parametrize("name", sorted(SOURCES))
@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 2), size=st.integers(4, 13), seed=st.integers(0, 2**16))
def test_a_sequential_factory_model_matches_torch(ported, name, batch, size, seed):
    assert_same_outputs(ported(name), [random_input(seed, (batch, 3, size, size))], tolerance=1e-5)


def test_the_port_builds_its_class_and_infers_the_input(ported):
    pair = ported("direct")
    code = (pair.out_dir / "model_keras.py").read_text()
    assert "class MakeModel(Sequential):" in code and "return MakeModel(num_classes=num_classes, width=width)" in code
    assert code.count("def make_model(") == 1  # (the source's function is not carried beside the class)
    manifest = json.loads((pair.out_dir / "porter-manifest.json").read_text())
    main = [c for c in manifest["sources"][0]["classes"] if c["name"] == "MakeModel"][0]
    assert main["example_inputs"], main  # (inferred from conv_bn(3, width): 3 channels, any size)


def test_class_names_the_factory_among_classes(tmp_path):
    text = SOURCES["direct"] + '''

class Unrelated(nn.Module):
    def forward(self, x):
        return x
'''
    out = convert_source(tmp_path, text, "make_model")
    assert "class MakeModel(Sequential):" in (out / "model_keras.py").read_text()


def test_a_factory_parameter_without_default_is_one_clear_error(tmp_path):
    path = tmp_path / "model.py"
    path.write_text("import torch.nn as nn\n\n\ndef make(width):\n    return nn.Sequential(nn.Linear(4, width))\n")
    with pytest.raises(UsageError, match=r"make\(\) builds the model as an nn.Sequential") as raised:
        convert(ConvertOptions(path, tmp_path / "out"))
    assert raised.value.line == 4 and "default" in raised.value.hint
    assert not (tmp_path / "out").exists()


def test_init_args_give_a_factory_parameter_without_default(tmp_path):
    path = tmp_path / "model.py"
    path.write_text("import torch.nn as nn\n\n\ndef Net(dim):\n    return nn.Sequential(nn.Conv2d(3, dim, 3, padding=1), "
                    "nn.ReLU())\n")
    conversion = convert(ConvertOptions(path, tmp_path / "out", init_args={"dim": 4}, input_specs=["3,6,6"]))
    assert conversion.exit_code == 0
    write_tree(tmp_path / "out", conversion.files)
    pair = PortedPair(tmp_path / "out")
    assert_same_outputs(pair, [random_input(0, (2, 3, 6, 7))], tolerance=1e-5)
