"""Class-level statements of module classes (passes/module_code.py translate_class_statements) and methods no
translated code calls: TorchScript metadata (`__annotations__` naming torch types, `__constants__`) and bare
annotations go, an annotated value keeps its value, a value computed with torch is translated; a plain method that
reads `self.training` takes a `training` argument (eval when not given). Each left `torch` undefined in the port
before (torchvision detection/anchor_utils.py, transform.py: exit 3)."""

import textwrap

import numpy as np
import pytest

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

SOURCE = '''
from typing import List, Optional

import torch
import torch.nn as nn


class Net(nn.Module):
    __annotations__ = {"anchors": List[torch.Tensor]}
    __constants__ = ["scale"]
    buffer: Optional[torch.Tensor]
    scale: float = 2.0
    eps = torch.finfo(torch.float32).eps

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x) * self.scale + self.eps

    def postprocess(self, y, **kwargs):
        if self.training:
            return y
        return y * 2
'''


@pytest.fixture(scope="module")
def class_statements_port(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(SOURCE), input_specs=("4",)))


def test_class_level_statements_are_translated_or_dropped(class_statements_port):
    pair = class_statements_port("net")
    text = pair.keras_module.__loader__.get_source(pair.keras_module.__name__).split("# --- ported from")[-1]
    assert "torch" not in text.replace("torch_", "").split("def load_state_dict")[0].replace("torch's", "")
    assert "__annotations__" not in text and "__constants__" not in text and "buffer:" not in text
    assert "scale = 2.0" in text
    assert_same_outputs(pair, [random_input(0, (2, 4))], tolerance=1e-6, what="class attributes")


def test_plain_method_reads_training_from_its_argument(class_statements_port):
    pair = class_statements_port("net")
    y = np.ones((2, 3), np.float32)
    assert np.allclose(pair.keras_model.postprocess(y), 2 * y)
    assert np.allclose(pair.keras_model.postprocess(y, training=True), y)
