"""The model module shows the model: the runtime sits in one module beside it, which the model module loads by path
(from any working directory, two ports in one process each with their own runtime)."""

import ast
import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from porter.codegen.runtime_bundle import runtime_file_name
from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.runtime import runtime_index

ROOT = Path(__file__).resolve().parents[2]

CONV_NET = """
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        return self.pool(self.conv(x)).flatten(1)
"""

LINEAR_NET = """
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x).relu()
"""


def port(directory, code, name="net"):
    """Convert `code` (written as directory/src/<name>.py) into directory/out; returns OUT."""
    source = Path(directory) / "src" / f"{name}.py"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(textwrap.dedent(code).lstrip())
    out = Path(directory) / "out"
    write_tree(out, convert(ConvertOptions(source, out)).files)
    return out


def load_by_path(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def top_level_definitions(text):
    names = set()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name) and not isinstance(node.value, (
                ast.Attribute, ast.Call)))  # `Conv2d = runtime.Conv2d` binds, it does not define
    return names


def test_model_module_holds_no_runtime_definitions(tmp_path):
    out = port(tmp_path, CONV_NET)
    model = (out / "net_keras.py").read_text()
    runtime = (out / "net_keras_runtime.py").read_text()
    copied = top_level_definitions(model) & set(runtime_index())
    assert not copied, f"runtime definitions copied into the model module: {sorted(copied)}"
    assert {"Conv2d", "AdaptiveAvgPool2d", "TorchModule", "load_state_dict"} <= top_level_definitions(runtime)
    assert "LSTM" not in top_level_definitions(runtime)  # only what the model uses
    assert "Conv2d = runtime.Conv2d" in model and "load_state_dict = runtime.load_state_dict" in model


def test_manifest_lists_the_runtime_module(tmp_path):
    conversion = convert(ConvertOptions(ROOT / "fixtures" / "mlp.py", tmp_path / "out"))
    module = conversion.manifest["sources"][0]["module"]
    assert runtime_file_name(module) in conversion.manifest["files"]
    assert runtime_file_name(module) in conversion.files


def test_runtime_module_imports_no_porter(tmp_path):
    out = port(tmp_path, CONV_NET)
    for name in ("net_keras.py", "net_keras_runtime.py"):
        tree = ast.parse((out / name).read_text())
        roots = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names}
        roots |= {node.module.split(".")[0] for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) and node.module}
        assert roots <= {"importlib", "os", "sys", "zlib", "keras", "numpy", "tensorflow", "math", "collections",
                         "functools", "itertools", "numbers", "typing", "copy", "warnings", "dataclasses",
                         "contextlib", "re", "inspect", "threading"}, (name, roots)


def test_importable_by_path_from_any_working_directory(tmp_path):
    pytest.importorskip("tensorflow")
    out = port(tmp_path, LINEAR_NET)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = textwrap.dedent(f"""
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location("model", {str(out / "net_keras.py")!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        net = module.Net()
        assert {str(out)!r} not in sys.path
        print(type(net).__mro__[1].__module__)
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=elsewhere, capture_output=True, text=True,
                            timeout=300, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": ""},
                            check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().startswith("net_keras_runtime_")


def test_two_ports_with_same_named_runtimes_load_together(tmp_path):
    """Two different models, both ported as net_keras.py + net_keras_runtime.py, loaded in one process under the
    same module name: each model module gets its own runtime."""
    pytest.importorskip("tensorflow")
    conv_out = port(tmp_path / "a", CONV_NET)
    linear_out = port(tmp_path / "b", LINEAR_NET)
    conv = load_by_path(conv_out / "net_keras.py", "net_keras")
    linear = load_by_path(linear_out / "net_keras.py", "net_keras")
    assert Path(sys.modules[conv.TorchModule.__module__].__file__) == conv_out / "net_keras_runtime.py"
    assert Path(sys.modules[linear.TorchModule.__module__].__file__) == linear_out / "net_keras_runtime.py"
    assert conv.TorchModule is not linear.TorchModule
    assert hasattr(conv, "Conv2d") and not hasattr(linear, "Conv2d")
    assert conv.Net()(_zeros((2, 1, 6, 6))).shape == (2, 4)
    assert linear.Net()(_zeros((2, 4))).shape == (2, 3)


def test_renamed_runtime_names_are_bound_under_the_emitted_name(tmp_path):
    """The user's file defines its own `Linear` and `TorchModule`: the runtime's are bound as TorchLinear and
    TorchTorchModule, the user's classes keep their names."""
    code = """
        import torch.nn as nn


        class TorchModule(nn.Module):
            pass


        class Linear(TorchModule):
            def __init__(self, features):
                super().__init__()
                self.project = nn.Linear(features, features, bias=False)

            def forward(self, x):
                return self.project(x) + x
    """
    model = (port(tmp_path, code) / "net_keras.py").read_text()
    assert "TorchLinear = runtime.Linear" in model and "TorchTorchModule = runtime.TorchModule" in model
    assert "class TorchModule(TorchTorchModule):" in model and "class Linear(TorchModule):" in model
    bound = [line.split(" = ")[0] for line in model.splitlines() if " = runtime." in line]
    assert "Linear" not in bound and "TorchModule" not in bound


def _zeros(shape):
    import numpy as np

    return np.zeros(shape, dtype="float32")


SPEC_TABLE_NET = """
import torch.nn as nn

WIDTHS = {}
WIDTHS["small"] = [4, 8]
WIDTHS["large"] = [8, 16]
UNUSED = {}
UNUSED["x"] = 1


class Net(nn.Module):
    def __init__(self, size="small"):
        super().__init__()
        first, second = WIDTHS[size]
        self.fc1 = nn.Linear(3, first)
        self.fc2 = nn.Linear(first, second)

    def forward(self, x):
        return self.fc2(self.fc1(x))
"""


def test_a_table_filled_entry_by_entry_is_carried_whole(tmp_path):
    """`WIDTHS = {}` then `WIDTHS["small"] = [...]` (GluonCV's HRNET_SPEC): the entries come with the table."""
    out = port(tmp_path, SPEC_TABLE_NET)
    model = load_by_path(out / "net_keras.py", "spec_table_net")
    assert model.WIDTHS == {"small": [4, 8], "large": [8, 16]} and not hasattr(model, "UNUSED")
    assert tuple(model.Net(size="large")(np.zeros((2, 3), np.float32)).shape) == (2, 16)


OUTPUTS_ANNOTATED_NET = """
from collections import namedtuple
from typing import Optional

import torch.nn as nn
from torch import Tensor

Outputs = namedtuple("Outputs", ["logits", "aux"])
Outputs.__annotations__ = {"logits": Tensor, "aux": Optional[Tensor]}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)

    def forward(self, x):
        return Outputs(self.fc(x), None)
"""


def test_dunder_metadata_of_a_table_is_left_out(tmp_path):
    """`Outputs.__annotations__ = {"logits": Tensor, ...}` (torchvision googlenet/inception, for TorchScript) is not
    an entry of the table: it stays out of the port, which would otherwise name torch's `Tensor`."""
    out = port(tmp_path, OUTPUTS_ANNOTATED_NET)
    model = load_by_path(out / "net_keras.py", "outputs_annotated_net")
    assert "__annotations__" not in (out / "net_keras.py").read_text()
    assert tuple(model.Net()(np.zeros((2, 3), np.float32)).logits.shape) == (2, 4)


IMPORTING_TWICE = '''
import math
from typing import (
    List,  # the widths
    Optional as Opt,
)
from typing import Tuple, List
from typing import List as Sizes, List as Unused
import torch.nn as nn


def widths(n: int) -> List[int]:
    return [n, n // 2]


class Net(nn.Module):
    def __init__(self, scale: Opt[float] = None):
        super().__init__()
        self.fc = nn.Linear(4, widths(4)[1])
        self.scale: Tuple[float, ...] = (math.pi,)
        self.sizes: Sizes[int] = widths(4)

    def forward(self, x):
        return self.fc(x) * self.scale[0]
'''


def test_imports_from_one_module_are_one_line(tmp_path):
    """A file whose parts import from `typing` in several statements (a timm model file, with the helpers the linker
    brings from timm.layers, had nine `from typing import ...` lines) gets one line per module, names kept as they are
    spelt, a name imported under another name on a line of its own (ruff's unused-import fix dropped `List as
    List_fast_norm`, used, beside an unused `List as List__fx`: timm densenet's port did not import), the module
    importable."""
    out = port(tmp_path, IMPORTING_TWICE)
    text = (out / "net_keras.py").read_text()
    typing_lines = [line for line in text.splitlines() if line.startswith("from typing import")]
    assert "from typing import Tuple" in typing_lines and "from typing import List as Sizes" in typing_lines
    assert "from typing import Optional as Opt" in typing_lines and len(typing_lines) == 3, typing_lines
    load_by_path(out / "net_keras.py", "imports_merged")
