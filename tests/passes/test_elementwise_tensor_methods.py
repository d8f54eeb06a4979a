"""In-file classes elementwise through tensor methods (conformer's `Swish`: `x * x.sigmoid()`) pass any layout
through: used both beside convolutions (channels-last) and beside Linears (torch's order) inside `nn.Sequential`s,
the port converted around every use of the class in the layout it met first (Conformer: 16 Transposes, torch 12
data moves). A method taking an axis or changing the shape keeps a class out. Inputs drawn by hypothesis."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.frontend.source import parse_source
from porter.passes.elementwise_classes import is_elementwise_class
from porter.rules.registry import load_all_rules
from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

SOURCE = '''
import torch
from torch import nn


class Swish(nn.Module):
    def forward(self, x):
        return x * x.sigmoid()


class Rescaled(nn.Module):
    def forward(self, x):
        return x.tanh() * 2.0 + x.sigmoid()


class Softmaxed(nn.Module):
    def forward(self, x):
        return x.softmax(dim=1)


class Viewed(nn.Module):
    def forward(self, x):
        return x.view(x.shape[0], -1)


class Block(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(dim, dim, 3, padding=1), Swish(), Rescaled(), nn.Conv1d(dim, dim, 1))
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), Swish(), Rescaled(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        x = x + self.conv(x.transpose(1, 2)).transpose(1, 2)
        return x + self.ff(x)


class Net(nn.Module):
    def __init__(self, dim=8, depth=2):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
'''


def test_tensor_methods_without_axes_are_elementwise(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(textwrap.dedent(SOURCE))
    source = parse_source(path)
    module_rules, function_rules = load_all_rules()
    verdicts = {name: is_elementwise_class(source, module_rules, function_rules, name)
                for name in ("Swish", "Rescaled", "Softmaxed", "Viewed", "Block")}
    assert verdicts == {"Swish": True, "Rescaled": True, "Softmaxed": False, "Viewed": False, "Block": False}


@pytest.fixture(scope="module")
def elementwise_port(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(SOURCE), input_specs=("6,8",)))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), length=st.sampled_from([3, 6, 9]), seed=st.integers(0, 2**16))
def test_elementwise_classes_in_both_layouts_match_torch(elementwise_port, batch, length, seed):
    pair = elementwise_port("net")
    assert_same_outputs(pair, [random_input(seed, (batch, length, 8))], tolerance=1e-5, what="elementwise classes")


def test_elementwise_classes_convert_nothing_around_them(elementwise_port):
    pair = elementwise_port("net")
    x = random_input(0, (2, 6, 8))
    assert_same_outputs(pair, [x], tolerance=1e-5, what="under XLA", jit=True)
    pair.build()
    assert count_transposes(pair.keras_model, [x]) == 0  # (4 when Swish took channels-last data only)
