"""Functions the model code uses but never hands a tensor (helpers its constructors call: MONAI's `ensure_tuple`,
`ComponentStore.__str__`) are carried over, not translated: their torch names become the port's (an isinstance check
against `torch.Tensor` asks for the port's tensor classes), and the standard-library imports they need come with
them (`from textwrap import dedent`: the port was refused by porter's own check, an undefined name)."""

import numpy as np

from tests.rules.op_ports import assert_same_outputs, port

MODEL = '''
from textwrap import dedent, indent

import numpy as np
import torch
import torch.nn as nn


def ensure_tuple(vals, wrap_array=False):
    if wrap_array and isinstance(vals, (np.ndarray, torch.Tensor)):
        return (vals,)
    return tuple(vals) if isinstance(vals, (list, tuple)) else (vals,)


def describe(layers):
    return indent(dedent("""
        layers:
    """ + ", ".join(str(n) for n in layers)), "  ")


def is_tensor_like(value):
    return isinstance(value, torch.Tensor)


class OpModel(nn.Module):
    def __init__(self, widths=(4, 6)):
        super().__init__()
        widths = ensure_tuple(widths)
        self.description = describe(widths)
        self.scale_is_tensor = is_tensor_like(torch.ones(1))
        self.array_is_item = len(ensure_tuple(np.zeros(2), wrap_array=True)) == 1
        self.convs = nn.ModuleList([nn.Conv2d(a, b, 3, padding=1) for a, b in zip((3,) + widths[:-1], widths)])

    def forward(self, x):
        for conv in self.convs:
            x = torch.relu(conv(x))
        if self.scale_is_tensor and self.array_is_item:
            x = x * 2.0
        return x
'''


def test_carried_helpers_import_and_match_torch(tmp_path):
    pair = port(tmp_path, MODEL)
    text = (tmp_path / "out" / "op_model_keras.py").read_text()
    assert "from textwrap import dedent, indent" in text
    assert "torch.Tensor" not in text and "TensorClasses" in text
    assert pair.keras_model.scale_is_tensor and pair.keras_model.array_is_item
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 4)).astype("float32")
    assert_same_outputs(pair, [x])
    assert_same_outputs(pair, [x], jit=True)
