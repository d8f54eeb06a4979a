"""`porter convert DIR`: a source package converts to a mirrored package under OUT.

The package here is written in another style than the fixtures: `__init__.py` re-exports, `from .layers import *`
with an `__all__`, `from ..common.blocks import X`, an absolute in-project import (`from mypkg.utils import
make_divisible`), a torch-free helper module, subpackages, a tests folder and a setup.py that are not model code.
Every mirrored module imports by file path from another working directory, each class matches torch numerically,
two ports load in one process, and bad packages stop with one line and exit 2, writing nothing.
"""

import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from porter.cli import main
from porter.verify.compare import assert_equivalent
from porter.verify.harness import import_path
from porter.verify.torch_bridge import perturb_torch_module, torch_state_numpy

PACKAGE = {
    "mypkg/__init__.py": '''"""A small vision package: re-exports its models."""
from .models import *  # noqa: F401,F403
from .models.net import TinyNet as Net  # noqa: F401

__version__ = "0.1"
''',
    "mypkg/utils.py": '''"""Helpers without torch."""


def make_divisible(value, divisor=8, min_value=None):
    """Round `value` to a multiple of `divisor`, never below 90% of it."""
    min_value = min_value or divisor
    rounded = max(min_value, int(value + divisor / 2) // divisor * divisor)
    if rounded < 0.9 * value:
        rounded += divisor
    return rounded
''',
    "mypkg/common/__init__.py": "",
    "mypkg/common/blocks.py": '''import torch
from torch import nn


class ConvBNReLU(nn.Sequential):
    """conv -> bn -> relu6, as a Sequential."""

    def __init__(self, cin, cout, kernel_size=3, stride=1, groups=1):
        padding = (kernel_size - 1) // 2
        super().__init__(
            nn.Conv2d(cin, cout, kernel_size, stride, padding, groups=groups, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU6(inplace=True),
        )


class SqueezeExcite(nn.Module):
    def __init__(self, channels, reduction=4):
        super().__init__()
        hidden = max(8, channels // reduction)
        self.fc1 = nn.Conv2d(channels, hidden, 1)
        self.fc2 = nn.Conv2d(hidden, channels, 1)

    def forward(self, x):
        scale = x.mean((2, 3), keepdim=True)
        scale = torch.sigmoid(self.fc2(torch.relu(self.fc1(scale))))
        return x * scale
''',
    "mypkg/models/__init__.py": '''from .layers import *  # noqa: F401,F403
from .net import *  # noqa: F401,F403
''',
    "mypkg/models/layers.py": '''"""Inverted residual blocks."""
import torch.nn as nn

from mypkg.utils import make_divisible
from ..common.blocks import ConvBNReLU

__all__ = ["InvertedResidual", "ConvBNReLU"]


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand_ratio):
        super().__init__()
        hidden = make_divisible(cin * expand_ratio)
        self.use_res_connect = stride == 1 and cin == cout
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(cin, hidden, kernel_size=1))
        layers += [
            ConvBNReLU(hidden, hidden, stride=stride, groups=hidden),
            nn.Conv2d(hidden, cout, 1, bias=False),
            nn.BatchNorm2d(cout),
        ]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)
''',
    "mypkg/models/net.py": '''"""The network."""
import torch
from torch import nn

from .layers import *
from ..common.blocks import SqueezeExcite
from mypkg.utils import make_divisible

__all__ = ["TinyNet"]


class TinyNet(nn.Module):
    def __init__(self, num_classes=10, width_mult=1.0):
        super().__init__()
        stem = make_divisible(16 * width_mult)
        self.stem = ConvBNReLU(3, stem, stride=2)
        self.blocks = nn.Sequential(
            InvertedResidual(stem, stem, 1, 1),
            InvertedResidual(stem, 24, 2, 4),
            InvertedResidual(24, 24, 1, 4),
        )
        self.se = SqueezeExcite(24)
        self.head = nn.Linear(24, num_classes)

    def forward(self, x):
        x = self.se(self.blocks(self.stem(x)))
        x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return self.head(x)
''',
    "mypkg/models/wide.py": '''"""A model whose file names no torch: its base class comes from the package."""
from .net import TinyNet


class WideNet(TinyNet):
    def __init__(self, num_classes=10):
        super().__init__(num_classes, width_mult=2.0)
''',
    "mypkg/tests/test_net.py": '''import torch
from torch import nn


class Fake(nn.Module):
    pass
''',
    "setup.py": 'from setuptools import setup\n\nsetup(name="mypkg")\n',
}
MODULES = {"common/blocks_keras.py": ["ConvBNReLU", "SqueezeExcite"], "models/layers_keras.py": ["InvertedResidual"],
           "models/net_keras.py": ["TinyNet"], "models/wide_keras.py": ["WideNet"]}
# class -> (module, constructor arguments, input shape (NCHW)). Each module's top class (the last one no other class
# of its file uses, as for a single file) keeps torch's NCHW at its boundary; the blocks it calls take channels-last
# tensors (porter's layout inside a model)
CASES = {"ConvBNReLU": ("common.blocks", (3, 8), {"stride": 2}, (2, 3, 16, 16)),
         "SqueezeExcite": ("common.blocks", (16,), {}, (2, 16, 8, 8)),
         "InvertedResidual": ("models.layers", (8, 8, 1, 4), {}, (2, 8, 8, 8)),
         "TinyNet": ("models.net", (), {"num_classes": 5}, (2, 3, 32, 32)),
         "WideNet": ("models.wide", (), {"num_classes": 3}, (2, 3, 32, 32))}
CHANNELS_LAST_INSIDE = {"ConvBNReLU"}


def write_package(root, files=PACKAGE):
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "mypkg"


def porter(*args):
    return main(["convert", *map(str, args)])


@pytest.fixture(autouse=True)
def forget_mypkg():
    """Each test's `mypkg` is its own: the package imported as such (torch, `porter verify`) leaves sys.modules."""
    yield
    for name in [name for name in sys.modules if name.split(".")[0] in ("mypkg", "zoo")]:
        del sys.modules[name]


@pytest.fixture
def torch_package(tmp_path, monkeypatch):
    """The source package imported by torch as a package (its relative imports need that)."""
    write_package(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return lambda dotted: importlib.import_module(f"mypkg.{dotted}")


def test_package_converts_mirrored_and_every_class_matches_torch(tmp_path, torch_package, monkeypatch, capsys):
    import torch

    out = tmp_path / "out"
    assert porter(tmp_path / "mypkg", "-o", out) == 0
    printed = capsys.readouterr().out
    assert "4 model modules" in printed and "no main class" in printed
    manifest = json.loads((out / "porter-manifest.json").read_text())
    assert manifest["main_class"] is None and manifest["skipped"] == []
    assert {entry["module"]: [c["name"] for c in entry["classes"]] for entry in manifest["sources"]} == MODULES
    assert [entry["path"] for entry in manifest["sources"]] == [
        "../mypkg/common/blocks.py", "../mypkg/models/layers.py", "../mypkg/models/net.py", "../mypkg/models/wide.py"]
    assert set(manifest["files"]) == {str(p.relative_to(out).as_posix()) for p in out.rglob("*") if p.is_file()}
    assert not (out / "train_tpu.py").exists()  # no main class: no training script
    # a block translated the same way in its own file's port is imported from it; one translated otherwise here
    # (blocks.py's top class SqueezeExcite takes torch's layout there, channels-last inside TinyNet) stays a copy
    net = next(entry for entry in manifest["sources"] if entry["module"] == "models/net_keras.py")
    assert {"module": "common/blocks_keras.py", "source": "common/blocks.py", "names": ["ConvBNReLU"]} in \
        net["imports"]
    assert {"name": "SqueezeExcite", "source": "common/blocks.py"} in net["copied"]
    net_text = (out / "models/net_keras.py").read_text()
    assert 'load_port_module(__file__, "../common/blocks_keras.py")' in net_text
    assert "class ConvBNReLU(" not in net_text
    porting = (out / "PORTING.md").read_text()
    assert all(f"`{module}`" in porting for module in MODULES)
    report = (out / "report.html").read_text()
    assert report.count('<article class="package-file"') == 4
    monkeypatch.chdir(tmp_path / "mypkg")  # importable by path from any working directory
    modules = {module: import_path(out / module) for module in MODULES}
    errors = {}
    for name, (dotted, args, kwargs, shape) in CASES.items():
        keras_module = modules[f"{dotted.replace('.', '/')}_keras.py"]
        torch.manual_seed(0)
        torch_model = getattr(torch_package(dotted), name)(*args, **kwargs)
        perturb_torch_module(torch_model, 0)
        torch_model.eval()
        keras_model = getattr(keras_module, name)(*args, **kwargs)
        keras_module.load_state_dict(keras_model, torch_state_numpy(torch_model))
        x = np.random.default_rng(1).standard_normal(shape).astype("float32")
        with torch.no_grad():
            expected = torch_model(torch.from_numpy(x)).numpy()
        if name in CHANNELS_LAST_INSIDE:
            got = np.asarray(keras_model(x.transpose(0, 2, 3, 1), training=False)).transpose(0, 3, 1, 2)
        else:
            got = np.asarray(keras_model(x, training=False))
        assert_equivalent(expected, got, tolerance=1e-4, what=name)
        errors[name] = float(np.abs(got - expected).max() / np.abs(expected).max())
    print("relative errors vs torch:", errors)


def test_two_package_ports_load_in_one_process(tmp_path):
    write_package(tmp_path)
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        assert porter(tmp_path / "mypkg", "-o", out) == 0
    first, second = (import_path(out / "models/net_keras.py") for out in outs)
    assert first.TinyNet is not second.TinyNet and first.runtime is not second.runtime
    x = np.zeros((1, 3, 32, 32), "float32")
    assert np.asarray(first.TinyNet()(x)).shape == np.asarray(second.TinyNet()(x)).shape == (1, 10)


def test_main_class_gets_the_training_script_and_equivalence_tests(tmp_path):
    package = write_package(tmp_path)
    out = tmp_path / "out"
    assert porter(package, "-o", out, "--class", "TinyNet", "--input-shape", "3,32,32",
                  "--init-args", '{"num_classes": 5}') == 0
    manifest = json.loads((out / "porter-manifest.json").read_text())
    assert manifest["main_class"] == "TinyNet" and manifest["init_args"] == {"num_classes": 5}
    assert manifest["sources"][0]["module"] == "models/net_keras.py"  # the main class's file comes first
    assert manifest["sources"][0]["classes"][0]["example_inputs"][0]["shape"] == [3, 32, 32]
    for name in ("train_tpu.py", "test_equivalence.py", "PORTING.md", "report.html"):
        assert (out / name).is_file()
    assert '"models/net_keras.py"' in (out / "train_tpu.py").read_text()
    assert "main class `TinyNet` in `models/net_keras.py`" in (out / "PORTING.md").read_text()
    assert import_path(out / "train_tpu.py").model_lib.TinyNet.__name__ == "TinyNet"  # loads models/net_keras.py
    # `porter verify OUT` checks the main class; the source (relative imports) is imported as part of its package
    assert main(["verify", str(out), "--examples", "2"]) == 0
    assert "porter:equivalence-summary:begin -->pass" in (out / "PORTING.md").read_text()
    # so does the generated test_equivalence.py, run where it was written
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                             "test_equivalence.py", "-k", "baseline"], cwd=out, capture_output=True, text=True,
                            check=False, env={**os.environ, "PORTER_EXAMPLES": "2"})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def test_class_given_with_its_file_and_an_ambiguous_class(tmp_path, capsys):
    files = dict(PACKAGE)
    files["mypkg/other.py"] = PACKAGE["mypkg/models/net.py"].replace("from .layers import *", "from .models.layers "
                                                                     "import *").replace("..common", ".common")
    package = write_package(tmp_path, files)
    assert porter(package, "-o", tmp_path / "out", "--class", "TinyNet") == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "models/net.py, other.py" in error and "--class" in error
    assert not (tmp_path / "out").exists()
    assert porter(package, "-o", tmp_path / "out", "--class", "models/net.py:TinyNet") == 0
    manifest = json.loads((tmp_path / "out" / "porter-manifest.json").read_text())
    assert manifest["main_class"] == "TinyNet" and manifest["sources"][0]["module"] == "models/net_keras.py"
    assert len(manifest["sources"]) == 5


@pytest.mark.parametrize("case", ["empty", "no model code", "syntax error", "flag without --class",
                                  "unknown constructor argument"])
def test_bad_packages_stop_with_one_line_and_write_nothing(case, tmp_path, capsys):
    root = tmp_path / "src"
    root.mkdir()
    args = []
    if case == "no model code":
        (root / "__init__.py").write_text("")
        (root / "utils.py").write_text(PACKAGE["mypkg/utils.py"])
    elif case == "syntax error":
        write_package(root)
        (root / "mypkg/common/broken.py").write_text("import torch\n\n\ndef f(:\n    pass\n")
        root = root / "mypkg"
    elif case == "flag without --class":
        root = write_package(root)
        args = ["--input-shape", "3,32,32"]
    elif case == "unknown constructor argument":
        root = write_package(root)
        args = ["--class", "TinyNet", "--init-args", '{"depth": 3}']
    out = tmp_path / "out"
    assert porter(root, "-o", out, *args) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "Traceback" not in error
    expected = {"empty": "is a directory holding no Python files", "no model code": "no nn.Module subclass",
                "syntax error": "mypkg/common/broken.py:4", "flag without --class": "--class",
                "unknown constructor argument": "mypkg/models/net.py:12: --init-args: TinyNet has no"}[case]
    assert expected in error
    assert not out.exists()


def test_weights_of_the_main_class(tmp_path, torch_package):
    import torch

    torch.manual_seed(0)
    torch_model = torch_package("models.net").TinyNet(num_classes=5)
    perturb_torch_module(torch_model, 0)
    torch.save(torch_model.state_dict(), tmp_path / "tiny.pt")
    out = tmp_path / "out"
    assert porter(tmp_path / "mypkg", "-o", out, "--class", "TinyNet", "--init-args", '{"num_classes": 5}',
                  "--weights", tmp_path / "tiny.pt") == 0
    assert "tiny.weights.h5" in json.loads((out / "porter-manifest.json").read_text())["files"]
    port = import_path(out / "models/net_keras.py")
    keras_model = port.TinyNet(num_classes=5)
    keras_model.load_weights(str(out / "tiny.weights.h5"))
    x = np.random.default_rng(2).standard_normal((2, 3, 32, 32)).astype("float32")
    with torch.no_grad():
        expected = torch_model.eval()(torch.from_numpy(x)).numpy()
    assert_equivalent(expected, np.asarray(keras_model(x, training=False)), tolerance=1e-4, what="TinyNet weights")


SOURCE_ROOT = {  # a repository whose scripts run from its root (no __init__.py): absolute imports between folders
    "netlib/common.py": PACKAGE["mypkg/common/blocks.py"],
    "tools/general.py": PACKAGE["mypkg/utils.py"],
    "netlib/yolo.py": """import torch
from torch import nn

from netlib.common import *
from tools.general import make_divisible


class Detect(nn.Module):
    def __init__(self, c=12):
        super().__init__()
        c = make_divisible(c)
        self.stem = ConvBNReLU(3, c)
        self.se = SqueezeExcite(c)
        self.out = nn.Conv2d(c, 4, 1)

    def forward(self, x):
        return self.out(self.se(self.stem(x)))
""",
}


def test_default_out_and_an_out_inside_the_package(tmp_path):
    package = write_package(tmp_path)
    assert porter(package) == 0
    assert (tmp_path / "mypkg_keras" / "models" / "net_keras.py").is_file()  # <DIR name>_keras beside DIR
    inside = package / "keras_port"
    for _ in range(2):  # the second run must not read the first one's output as source
        assert porter(package, "-o", inside, "--force") == 0
        manifest = json.loads((inside / "porter-manifest.json").read_text())
        assert [entry["module"] for entry in manifest["sources"]] == list(MODULES)


def test_files_porter_cannot_take_are_left_out_and_listed(tmp_path, capsys):
    files = dict(PACKAGE)
    files["mypkg/twice.py"] = PACKAGE["mypkg/common/blocks.py"] + "\n\nclass Wide(ConvBNReLU):\n    pass\n\n" + \
        PACKAGE["mypkg/common/blocks.py"].split("\n\n\n")[1]  # ConvBNReLU defined again after a class derives from it
    # (defined again before anything reads it, the later one is ported, as Python keeps it: static_branches.py)
    files["mypkg/latin1.py"] = "import torch\n"
    package = write_package(tmp_path, files)
    (package / "latin1.py").write_bytes(b"import torch\nname = '\xe9'\n")
    out = tmp_path / "out"
    assert porter(package, "-o", out) == 1
    err = capsys.readouterr().err
    manifest = json.loads((out / "porter-manifest.json").read_text())
    assert [item["path"] for item in manifest["skipped"]] == ["latin1.py", "twice.py"]
    assert manifest["skipped"][1]["error"].startswith("twice.py:")  # relative to the package, never absolute
    assert str(tmp_path) not in (out / "porter-manifest.json").read_text()
    assert "twice.py: not converted" in err and len(manifest["sources"]) == 4
    assert "## Files left out" in (out / "PORTING.md").read_text()


def test_a_source_root_without_init_links_its_absolute_imports(tmp_path, monkeypatch):
    import torch

    repo = tmp_path / "repo"
    write_package(repo, SOURCE_ROOT)
    out = tmp_path / "out"
    assert porter(repo, "-o", out, "--class", "Detect", "--input-shape", "3,16,16") == 0
    manifest = json.loads((out / "porter-manifest.json").read_text())
    assert [entry["module"] for entry in manifest["sources"]] == ["netlib/yolo_keras.py", "netlib/common_keras.py"]
    assert manifest["source_root"] == "../repo"
    monkeypatch.syspath_prepend(str(repo))
    try:
        torch.manual_seed(0)
        torch_model = importlib.import_module("netlib.yolo").Detect()
        # verify and the generated test import the source with the source root on sys.path
        monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(repo)])
        for name in [n for n in sys.modules if n.split(".")[0] in ("netlib", "tools")]:
            del sys.modules[name]
        assert main(["verify", str(out), "--examples", "2"]) == 0
    finally:
        for name in [n for n in sys.modules if n.split(".")[0] in ("netlib", "tools")]:
            del sys.modules[name]
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                             "test_equivalence.py", "-k", "baseline"], cwd=out, capture_output=True, text=True,
                            check=False, env={**os.environ, "PORTER_EXAMPLES": "2"})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert_port_matches(torch_model, out / "netlib/yolo_keras.py", "Detect", (2, 3, 16, 16), seed=4)


def assert_port_matches(torch_model, module_path, class_name, shape, seed):
    """The port's `class_name` (built with its defaults) loads the perturbed torch model's weights and matches it."""
    import torch

    perturb_torch_module(torch_model, 0)
    port = import_path(module_path)
    keras_model = getattr(port, class_name)()
    port.load_state_dict(keras_model, torch_state_numpy(torch_model))
    x = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    with torch.no_grad():
        expected = torch_model.eval()(torch.from_numpy(x)).numpy()
    assert_equivalent(expected, np.asarray(keras_model(x, training=False)), tolerance=1e-4, what=class_name)



def test_a_file_of_the_package_brings_the_model_files_it_imports(tmp_path, torch_package, monkeypatch):
    """`porter convert mypkg/models/net.py`: the model files net.py takes definitions from are converted too,
    mirrored under OUT by their path in the package, imported by net_keras.py and listed in the manifest; the port
    matches torch from another working directory."""
    import torch

    out = tmp_path / "single"
    assert porter(tmp_path / "mypkg/models/net.py", "-o", out, "--input-shape", "3,32,32") == 0
    manifest = json.loads((out / "porter-manifest.json").read_text())
    assert [entry["module"] for entry in manifest["sources"]] == ["net_keras.py", "common/blocks_keras.py"]
    assert manifest["sources"][0]["imports"][0]["names"] == ["ConvBNReLU"]
    # one runtime module for the port: the sibling loads net_keras.py's (one BatchNorm2d class, one TorchLayer)
    assert "common/blocks_keras.py" in manifest["files"] and "common/blocks_keras_runtime.py" not in manifest["files"]
    assert '(__file__, "../net_keras_runtime.py")' in (out / "common/blocks_keras.py").read_text()
    monkeypatch.chdir(tmp_path / "mypkg")
    port = import_path(out / "net_keras.py")
    torch.manual_seed(0)
    torch_model = torch_package("models.net").TinyNet(num_classes=5)
    perturb_torch_module(torch_model, 0)
    torch_model.eval()
    keras_model = port.TinyNet(num_classes=5)
    port.load_state_dict(keras_model, torch_state_numpy(torch_model))
    x = np.random.default_rng(2).standard_normal((2, 3, 32, 32)).astype("float32")
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    assert_equivalent(expected, np.asarray(keras_model(x, training=False)), tolerance=1e-4, what="TinyNet")


SHARED_PACKAGE = {
    "shop/__init__.py": "",
    "shop/ops.py": '''import torch
from torch import nn


def scale_boxes(boxes, factor):
    return torch.clamp(boxes * factor, min=0.0)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)

    def positives(self, x):
        return torch.where(x > 0)
''',
    "shop/net.py": '''from torch import nn

from .ops import Head, scale_boxes


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = Head()

    def forward(self, x):
        return scale_boxes(self.head(x), 2.0)
''',
}


def test_definitions_live_in_their_own_files_port(tmp_path, monkeypatch):
    """What net.py takes from ops.py lives in ops.py's port and net's imports it: a helper only net.py calls
    (`scale_boxes`) is model code of ops.py's port too, and a stub in a linked class names ops.py's line wherever the
    class is translated, so the two translations are one text. Net built from its port matches torch."""
    import torch

    for relative, text in SHARED_PACKAGE.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    out = tmp_path / "out"
    assert porter(tmp_path / "shop", "-o", out) == 1  # the stub of torch.where(condition)
    entries = {entry["module"]: entry for entry in json.loads((out / "porter-manifest.json").read_text())["sources"]}
    assert entries["net_keras.py"]["imports"] == [{"module": "ops_keras.py", "source": "ops.py",
                                                   "names": ["scale_boxes", "Head"]}]
    assert entries["net_keras.py"]["copied"] == []
    assert "torch.where(condition) at ops.py:18 is not supported yet" in (out / "ops_keras.py").read_text()
    net_text = (out / "net_keras.py").read_text()
    assert "class Head(" not in net_text and "def scale_boxes(" not in net_text
    monkeypatch.syspath_prepend(str(tmp_path))
    torch.manual_seed(0)
    torch_model = importlib.import_module("shop.net").Net()
    perturb_torch_module(torch_model, 0)
    port = import_path(out / "net_keras.py")
    keras_model = port.Net()
    port.load_state_dict(keras_model, torch_state_numpy(torch_model))
    x = np.random.default_rng(2).standard_normal((3, 4)).astype("float32")
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    assert_equivalent(expected, np.asarray(keras_model(x, training=False)), tolerance=1e-4, what="Net")
    for name in [name for name in sys.modules if name == "shop" or name.startswith("shop.")]:
        del sys.modules[name]


FACTORY_PACKAGE = {  # pytorchcv's pattern: layer factories in one file, blocks that check what they built in another
    "zoo/__init__.py": "",
    "zoo/common/__init__.py": "",
    "zoo/common/norm.py": '''from inspect import isfunction

from torch import nn


def lambda_batchnorm2d(eps=1e-5):
    return lambda num_features: nn.BatchNorm2d(num_features=num_features, eps=eps)


def create_normalization_layer(normalization, **kwargs):
    if isfunction(normalization):
        return normalization(**kwargs)
    assert isinstance(normalization, nn.Module)
    return normalization
''',
    "zoo/net.py": '''import torch
from torch import nn

from .common.norm import create_normalization_layer, lambda_batchnorm2d


class ConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels, normalization=lambda_batchnorm2d()):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
        self.bn = create_normalization_layer(normalization, num_features=out_channels)
        assert isinstance(self.bn, nn.BatchNorm2d)
        assert isinstance(self.bn, (nn.Module, nn.Identity))
        assert issubclass(type(self.bn), nn.Module)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class Net(nn.Module):
    def __init__(self, width=8, num_classes=4):
        super().__init__()
        self.features = nn.Sequential(ConvBlock(3, width), ConvBlock(width, width))
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))
''',
}


@pytest.mark.parametrize("whole_package", [True, False], ids=["package", "file-with-siblings"])
def test_layers_built_in_another_file_are_the_classes_the_user_checks(tmp_path, monkeypatch, whole_package):
    """One runtime module for the whole port: a BatchNorm2d a sibling file's factory builds is the BatchNorm2d of
    the file that asserts `isinstance(self.bn, nn.BatchNorm2d)`, and `nn.Module` there means any layer of the
    port; the port matches torch."""
    for relative, text in FACTORY_PACKAGE.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    out = tmp_path / "out"
    source = tmp_path / "zoo" if whole_package else tmp_path / "zoo/net.py"
    assert porter(source, "-o", out, "--class", "Net", "--input-shape", "3,9,9") == 0
    assert not list(out.rglob("norm_keras_runtime.py"))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert_port_matches(importlib.import_module("zoo.net").Net(), out / "net_keras.py", "Net", (2, 3, 9, 9), seed=5)
