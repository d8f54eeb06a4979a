"""`porter convert --class` naming what builds the model rather than the class: a classmethod
(efficientnet_pytorch's `EfficientNet.from_name("efficientnet-b0")`) or a factory function. The manifest records it,
train_tpu.py and the reports build the model through it, and `porter verify`'s harness builds both models with it."""

import json
import textwrap

import numpy as np
import pytest

from porter.cli import main
from porter.verify.checks import Equivalence
from porter.verify.harness import PortedPair

SOURCE = '''
import torch
import torch.nn as nn

CONFIGS = {"small": (8, 2), "large": (16, 3)}


def drop_path(x, p, training):
    if not training or p == 0.0:
        return x
    keep = torch.floor(1 - p + torch.rand([x.shape[0], 1, 1, 1], dtype=x.dtype))
    return x / (1 - p) * keep


class Net(nn.Module):
    def __init__(self, config=None, num_classes=10, drop_rate=0.0):
        super().__init__()
        assert config is not None, "build it with Net.from_name(...)"
        width, depth = config
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.blocks = nn.ModuleList([nn.Sequential(nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width),
                                                   nn.ReLU()) for _ in range(depth)])
        self.drop_rate = drop_rate
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        x = self.stem(x)
        for index, block in enumerate(self.blocks):
            x = x + drop_path(block(x), self.drop_rate * index / len(self.blocks), self.training)
        return self.head(x.mean((2, 3)))

    @classmethod
    def from_name(cls, name, **overrides):
        return cls(CONFIGS[name], **overrides)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("builders")
    (folder / "net.py").write_text(textwrap.dedent(SOURCE))

    def convert(*arguments):
        out = folder / f"out{len(list(folder.iterdir()))}"
        return main(["convert", str(folder / "net.py"), "-o", str(out), "--input-shape", "3,16,16", *arguments]), out

    return convert


def test_a_classmethod_builds_the_model_everywhere(ported, capsys):
    code, out = ported("--class", "Net.from_name", "--init-args", '{"name": "large", "num_classes": 4}')
    assert code == 0
    assert "main class Net built by Net.from_name()" in capsys.readouterr().out
    manifest = json.loads((out / "porter-manifest.json").read_text())
    assert (manifest["main_class"], manifest["model_factory"]) == ("Net", "Net.from_name")
    assert "model = model_lib.Net.from_name(**INIT_ARGS)" in (out / "train_tpu.py").read_text()
    porting = (out / "PORTING.md").read_text()
    assert "from net_keras import Net  #" in porting and "model = Net.from_name(name='large', num_classes=4)" in porting
    pair = PortedPair(out)
    assert len(pair.torch_model.blocks) == 3
    inputs = pair.example_inputs(batch=2)
    for want, got in zip(pair.run_torch(inputs), pair.run_keras(inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_classmethod_that_is_none_is_one_line(ported, capsys):
    code, _ = ported("--class", "Net.forward")
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no classmethod forward of a module class Net" in err


def test_randomness_drawn_per_example_is_found_before_train_mode_is_compared(ported):
    """Stochastic depth drawn per example with small rates: two runs of a batch of 2 came out equal one time in
    20 (efficientnet_pytorch's drop_connect), and the train-mode comparison then failed on a right port."""
    _, out = ported("--class", "Net.from_name", "--init-args", '{"name": "large", "drop_rate": 0.2}')
    equivalence = Equivalence(PortedPair(out))
    assert not equivalence.train_mode
    assert any("not deterministic in training" in note for note in equivalence.notes)


COMPOSED = '''
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, cin, width):
        super().__init__()
        self.conv = nn.Conv2d(cin, width, 3, stride=2, padding=1)
        self.norm = nn.BatchNorm2d(width)
        self.out_channels = width

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x)))


class Head(nn.Module):
    def __init__(self, cin, classes):
        super().__init__()
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


class Model(nn.Module):
    def __init__(self, encoder, head):
        super().__init__()
        self.encoder = encoder
        self.head = head

    def forward(self, x):
        return self.head(self.encoder(x))


def build_model(num_classes=5, width=6):
    encoder = Encoder(3, width)
    head = Head(encoder.out_channels, num_classes)
    return Model(encoder, head)
'''


def test_a_model_composed_of_modules_the_factory_builds_first_is_built_as_it_does(tmp_path, capsys):
    """`encoder = Encoder(3, width); head = Head(encoder.out_channels, n); return Model(encoder, head)`: the main class
    takes modules, which `--init-args` cannot give; porter said "converted" and train_tpu.py built `Model()`. The
    port's factory builds each module once, in the source's order, and the model from them."""
    (tmp_path / "composed.py").write_text(COMPOSED)
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "composed.py"), "-o", str(out), "--input-shape", "3,12,12"]) == 0
    assert "main class Model built by build_model()" in capsys.readouterr().out
    text = (out / "composed_keras.py").read_text()
    assert "def build_model(num_classes=5, width=6):\n" in text
    assert "    encoder = Encoder(3, width)\n    head = Head(encoder.out_channels, num_classes)\n" \
        "    return Model(encoder, head)\n" in text
    assert "model = model_lib.build_model(**INIT_ARGS)" in (out / "train_tpu.py").read_text()
    pair = PortedPair(out)
    inputs = pair.example_inputs(batch=2)
    for want, got in zip(pair.run_torch(inputs), pair.run_keras(inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_main_class_nothing_porter_reads_can_build_is_said_in_one_warning(tmp_path, capsys):
    """torchvision's segmentation files build `FCN(backbone, classifier)` through a sibling file's factory, which
    porter does not follow: the port is written, and a warning says that train_tpu.py and `porter verify` cannot
    build it without --init-args (before, only a line in train_tpu.py's docstring said so)."""
    source = COMPOSED.replace("    encoder = Encoder(3, width)\n", "    encoder = Encoder(3, width)\n"
                                                                     "    encoder.conv.stride = (1, 1)\n")
    (tmp_path / "composed.py").write_text(source)
    assert main(["convert", str(tmp_path / "composed.py"), "-o", str(tmp_path / "out"), "--input-shape",
                 "3,12,12"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "needs encoder, head" in line]
    assert len(warnings) == 1 and "composed.py:" in warnings[0] and "pass --init-args" in warnings[0]
