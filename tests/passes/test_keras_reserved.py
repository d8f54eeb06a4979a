"""Attribute names a Keras Layer or Model uses itself, private ones included: a user's class setting one (DARTS's
`self._layers = layers`, an int; `self._losses = [2, 3]`; `self._tracker = [...]`) overwrote Keras's own, so the
port crashed when built (`for layer in self._layers`: an int is not iterable) or ran wrong (Keras empties `_losses`
on every call: max error 1.0, silently). They are renamed as the public ones are (passes/context.py KERAS_PRIVATE),
and the list is checked against the installed Keras."""

import keras
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.passes.context import KERAS_RESERVED
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Cell(nn.Module):
    def __init__(self, c, layers=3):
        super().__init__()
        self._layers = layers
        self._losses = [2, 3]
        self._tracker = [1.5, 0.5]
        self._metrics = {"scale": 0.25}
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        for _ in range(self._layers):
            x = torch.relu(self.conv(x))
        return x * len(self._losses) + sum(self._tracker) + self._metrics["scale"]


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 5, 1)
        self.cell = Cell(5)

    def forward(self, x):
        return self.cell(self.stem(x))
'''


def test_every_private_name_of_the_installed_keras_is_reserved():
    class Probe(keras.layers.Layer):
        def call(self, x):
            return x

    layer, model = Probe(), keras.Sequential([keras.layers.Dense(2)])
    layer(keras.ops.ones((1, 2)))
    model(keras.ops.ones((1, 2)))
    names = set(dir(keras.layers.Layer)) | set(dir(keras.Model)) | set(vars(layer)) | set(vars(model))
    private = {name for name in names if name.startswith("_") and not name.startswith(("__", "_porter"))}
    assert private <= KERAS_RESERVED, sorted(private - KERAS_RESERVED)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("keras_reserved"), SOURCE, input_specs=("3,7,9",))


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 2), height=st.integers(3, 9), width=st.integers(3, 9), seed=st.integers(0, 2**16))
def test_private_keras_names_of_the_source_are_renamed(pair, batch, height, width, seed):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "self._layers_ = layers" in code and "self._losses_" in code
