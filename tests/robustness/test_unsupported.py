"""Unsupported constructs (custom extension ops, unknown third-party layers) never stop a conversion: the output
compiles and imports, each construct is a stub raising NotImplementedError naming file:line, the manifest lists
it with its line, and the exit code is 1."""

import json
import textwrap

import numpy as np
import pytest

from porter.verify.harness import import_path
from tests.robustness.conftest import write_source
from tests.robustness.test_generated_code import assert_every_python_file_compiles, undefined_or_redefined_names

pytest.importorskip("tensorflow")

HEADER = "import torch\nimport torch.nn as nn\n"

# name -> (source after HEADER, the line (1-based, whole file) of the construct that must be listed)
CASES = {
    "extension_op": ('''
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return torch.ops.mylib.fused_gelu(self.fc(x), 0.5)
        ''', 9),
    "third_party_layer": ('''
        from mylib.layers import FancyNorm


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.norm = FancyNorm(4)

            def forward(self, x):
                return self.norm(self.fc(x))
        ''', 10),
    "third_party_model_factory": ('''
        import timm


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.backbone = timm.create_model("resnet18", features_only=True)  # (FeatureListNet: a stub)

            def forward(self, x):
                return self.backbone(x)
        ''', 9),
    "third_party_function": ('''
        from mylib import ops as myops


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return myops.thing(self.fc(x))
        ''', 12),
}

# name -> text of the construct on the line CASES names (so an expected line cannot drift off the construct and
# make a case fail, or an xfail hold, for the wrong reason)
CONSTRUCTS = {
    "extension_op": "torch.ops.mylib.fused_gelu(",
    "third_party_layer": "FancyNorm(4)",
    "third_party_model_factory": "timm.create_model(",
    "third_party_function": "myops.thing(",
}

KNOWN_TRANSLATOR_BUGS = {  # reported to the lead; strict, so a fix shows up as XPASS to remove the mark
}


def full_source(name):
    return HEADER + textwrap.dedent(CASES[name][0]).lstrip("\n")


def test_expected_lines_hold_the_construct():
    assert set(CONSTRUCTS) == set(CASES)
    for name, (_, line) in CASES.items():
        assert CONSTRUCTS[name] in full_source(name).splitlines()[line - 1], (name, line)


def case_params():
    for name in sorted(CASES):
        marks = [pytest.mark.xfail(reason=KNOWN_TRANSLATOR_BUGS[name], strict=True)] \
            if name in KNOWN_TRANSLATOR_BUGS else []
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", case_params())
def test_unsupported_construct_gives_partial_output(porter_cli, tmp_path, name):
    line = CASES[name][1]
    source = write_source(tmp_path / f"{name}.py", full_source(name))
    out = tmp_path / "out"
    result = porter_cli("convert", source, "-o", out, "--input-shape", "4")
    assert result.code == 1, result.err
    assert "stub" in result.out and "Traceback" not in result.err
    manifest = json.loads((out / "porter-manifest.json").read_text())
    net = next(c for c in manifest["sources"][0]["classes"] if c["name"] == "Net")
    assert net["status"] == "partial"
    assert line in [entry["line"] for entry in net["unsupported"]], net["unsupported"]
    assert all(entry["construct"] and entry["reason"] for entry in net["unsupported"])
    assert_every_python_file_compiles(out)
    module_path = out / f"{name}_keras.py"
    assert undefined_or_redefined_names(module_path) == []
    module = import_path(module_path)
    stub_message = f"{name}.py:{line}"
    try:
        model = module.Net()
        model(np.zeros((2, 4), np.float32))
    except NotImplementedError as error:
        assert stub_message in str(error) or f"{name}.py:" in str(error)
    else:
        pytest.fail("the stub did not raise")
