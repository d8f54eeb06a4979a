"""Pretrained-weight methods are I/O, not model code (frontend/weight_loading.py): efficientnet_pytorch's
`EfficientNet.from_pretrained` calls `load_pretrained_weights`, which downloads with `model_zoo.load_url` or reads
`torch.load(path)`; it was translated into stubs (exit 1). Such a method is left out of the port's class and listed in
PORTING.md as not carried over, with the functions only it needs; the rest of the class (`from_name`, a classmethod
that builds the model) is kept, and the port matches torch."""

import textwrap

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn
from torch.utils import model_zoo

URLS = {"tiny": "https://example.com/tiny.pth"}


def load_pretrained_weights(model, name, weights_path=None):
    if isinstance(weights_path, str):
        state_dict = torch.load(weights_path)
    else:
        state_dict = model_zoo.load_url(URLS[name])
    state_dict.pop("fc.weight")
    model.load_state_dict(state_dict, strict=False)


def fetch(model, name):
    load_pretrained_weights(model, name)


class Net(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))

    @classmethod
    def from_name(cls, name, channels=4):
        return cls(channels)

    @classmethod
    def from_pretrained(cls, name):
        model = cls.from_name(name)
        load_pretrained_weights(model, name)
        return model

    def refresh(self, name):
        fetch(self, name)
'''


def test_download_methods_are_listed_not_stubbed(tmp_path):
    pair = port(tmp_path, textwrap.dedent(SOURCE))  # exit 0: nothing stubbed
    assert_same_outputs(pair, [random_input(0, (2, 3, 6, 6))], tolerance=1e-5, what="downloads left out")
    text = (pair.out_dir / "op_model_keras.py").read_text()
    assert "def from_name(" in text
    assert "from_pretrained" not in text and "load_pretrained_weights" not in text and "def refresh" not in text
    porting = (pair.out_dir / "PORTING.md").read_text()
    assert "`def Net.from_pretrained(...)  (pretrained-weight download or file I/O)`" in porting
    assert "`def Net.refresh(...)  (pretrained-weight download or file I/O)`" in porting  # through `fetch`
    assert "`def load_pretrained_weights(...)  (training/data code)`" in porting
