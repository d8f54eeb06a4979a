"""Functions defined inside forward or a helper (closures) are translated like the enclosing body (they were copied
as written, leaving `torch` undefined: exit 3 on torchvision's detection files): their parameters are values of
unknown kind, they read the enclosing variables, and their results are in torch's layout."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        y = self.conv(x)
        scale = 0.5

        def gate(
            t,  # a tensor
            power: int = 2,
        ) -> torch.Tensor:
            return torch.sigmoid(t) ** power * scale

        def pooled(t):
            return F.adaptive_avg_pool2d(t, 1).flatten(1)

        z = pooled(gate(y) + y)
        return self.fc(z) + gate(z, power=1).sum(-1, keepdim=True)
'''


@pytest.fixture(scope="module")
def nested_port(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(SOURCE)))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), size=st.sampled_from([3, 6, 7]), seed=st.integers(0, 2**16))
def test_nested_functions_match_torch(nested_port, batch, size, seed):
    pair = nested_port("net")
    assert_same_outputs(pair, [random_input(seed, (batch, 3, size, size))], tolerance=1e-5, what="closures")


def test_nested_functions_are_translated(nested_port):
    pair = nested_port("net")
    text = pair.keras_module.__loader__.get_source(pair.keras_module.__name__).split("class Net")[-1]
    assert "torch." not in text.split("def load_state_dict")[0]
    assert "def gate(t, power=2):" in text
    assert_same_outputs(pair, [random_input(0, (2, 3, 5, 5))], tolerance=1e-5, what="under XLA", jit=True)


BUILDER = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    """Layers added by a function defined in `__init__`, each call handing another index (crnn.pytorch)."""

    def __init__(self, nc=3, widths=(4, 6, 5)):
        super().__init__()
        stack = nn.Sequential()

        def conv_relu(i, norm=False):
            n_in = nc if i == 0 else widths[i - 1]
            stack.add_module(f"conv{i}", nn.Conv2d(n_in, widths[i], 3, 1, 1))
            if norm:
                stack.add_module(f"norm{i}", nn.BatchNorm2d(widths[i]))
            stack.add_module(f"relu{i}", nn.ReLU(True))

        conv_relu(0)
        conv_relu(1, True)
        conv_relu(2)
        self.stack = stack

    def forward(self, x):
        return self.stack(x)
'''


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 2), size=st.sampled_from([3, 8]), seed=st.integers(0, 2**16))
def test_a_builder_closure_serves_every_call(tmp_path_factory, batch, size, seed):
    """The first call's `i == 0` decides nothing (every conv took `nc` channels: the weights did not load), and the
    layers the calls add are the Sequential's children where porter lays it out (it took the Sequential for an
    empty one and handed it torch's layout, which its channels-last convs read as NHWC)."""
    pair = _builder_port(tmp_path_factory)
    x = random_input(seed, (batch, 3, size, size))
    assert_same_outputs(pair, [x], tolerance=1e-5, what="builder closure")
    assert_same_outputs(pair, [x], tolerance=1e-5, what="builder closure under XLA", jit=True)


_BUILDER = {}


def _builder_port(tmp_path_factory):
    if "pair" not in _BUILDER:
        _BUILDER["pair"] = port(tmp_path_factory.mktemp("builder"), BUILDER)
    return _BUILDER["pair"]
