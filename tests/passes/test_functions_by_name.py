"""Activation functions looked up by name at run time (`self.act = getattr(F, act)`, `getattr(torch, act)`): the
functions of that torch module the file names in string literals, in a table the name picks (`{"relu": relu,
"silu": silu}[act]`), held as an elementwise callable (images stay channels-last through it). `getattr(F, act)`
became `getattr("torch.nn.functional", act)` (an AttributeError on a string), `getattr(torch, act)` an undefined
`torch`. Each matches torch for every name the file offers, on hypothesis-drawn sizes, with the boundary's
Transposes only."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

ACTIVATIONS = ("relu", "silu", "gelu", "tanh", "sigmoid")


class OpModel(nn.Module):
    def __init__(self, act="silu", owner="F"):
        super().__init__()
        assert act in ACTIVATIONS
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.act = getattr(F, act) if owner == "F" else getattr(torch, act)
        self.head = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        return self.head(self.act(self.conv(x)))
'''

CASES = [("silu", "F"), ("gelu", "F"), ("relu", "F"), ("tanh", "torch"), ("sigmoid", "torch")]


@pytest.fixture(scope="module", params=CASES, ids=[f"{owner}.{act}" for act, owner in CASES])
def pair(request, tmp_path_factory):
    act, owner = request.param
    return port(tmp_path_factory.mktemp("by_name"), textwrap.dedent(SOURCE), init_args={"act": act, "owner": owner})


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.integers(3, 9), width=st.integers(3, 9))
def test_function_chosen_by_name_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])


def test_function_chosen_by_name_keeps_images_channels_last(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert '"silu": silu' in code and "torch.nn.functional" not in code.split("class OpModel")[1]
    assert count_transposes(pair.keras_model, [random_input(0, (2, 3, 7, 6))]) <= 2


# A layer class looked up by name and built later (`act = getattr(nn, activation)`, then
# `act(**activation_params)` in a Sequential: a SEANet/EnCodec-style encoder): `getattr("torch.nn", activation)`,
# an AttributeError on a string when the port was built. The classes the file names are a table too.
LAYER_CLASSES = '''
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, activation='ELU', activation_params={'alpha': 1.0}):
        super().__init__()
        act = getattr(nn, activation)
        self.body = nn.Sequential(nn.Conv1d(1, 4, 3, padding=1), act(**activation_params), nn.Conv1d(4, 2, 1))

    def forward(self, x):
        return self.body(x)
'''

LAYER_CASES = [("ELU", {"alpha": 0.5}), ("LeakyReLU", {"negative_slope": 0.3})]


@pytest.fixture(scope="module", params=LAYER_CASES, ids=[name for name, _ in LAYER_CASES])
def layer_class(request, tmp_path_factory):
    name, params = request.param
    source = textwrap.dedent(LAYER_CLASSES).replace("activation='ELU'", f"activation={name!r}")
    return port(tmp_path_factory.mktemp(name), source, input_specs=("1,9",),
                init_args={"activation": name, "activation_params": params})


@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), length=st.sampled_from([3, 9]))
def test_a_layer_class_chosen_by_name_matches_torch(layer_class, seed, batch, length):
    assert_same_outputs(layer_class, [random_input(seed, (batch, 1, length))])
