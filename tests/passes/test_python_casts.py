"""`int(t)`, `float(t)` and `bool(t)` on a tensor: run eagerly, the Python number torch gives; traced (XLA), a scalar
tensor of that kind (torchaudio's conformer `int(torch.max(lengths).item())` became `item(t, t)`, a TypeError when
the port ran)."""

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


def longest(lengths):
    return int(torch.max(lengths).item())


class Net(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        lengths = (x > 0).long().sum(-1)
        n = longest(lengths)
        k = int(lengths.max())
        scale = float(x.abs().max())
        return self.fc(x) / scale, lengths * (n + k)
'''


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 5), seed=st.integers(0, 2**16), jit=st.booleans())
def test_casts_of_tensors_match_torch(tmp_path_factory, batch, length, seed, jit):
    pair = _port(tmp_path_factory)
    assert_same_outputs(pair, [random_input(seed, (batch, length, 4))], tolerance=1e-5, what="casts", jit=jit)


def test_cast_reads_the_tensor_once(tmp_path_factory):
    text = _port(tmp_path_factory).keras_module.__loader__.get_source(_port(tmp_path_factory).keras_module.__name__)
    assert "python_scalar(item(torch_max(lengths)), int)" in text and "python_scalar(torch_max(lengths), int)" in text


_PORTS = {}


def _port(tmp_path_factory):
    if "net" not in _PORTS:
        _PORTS["net"] = cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(SOURCE),
                                                 input_specs=("5,4",)))
    return _PORTS["net"]("net")
