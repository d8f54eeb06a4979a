"""A model class mixing in a plain class of the file (`class Net(InitMixin, nn.Module)`, the mixin's
`init_weights()` called by the constructor): the port keeps the mixin as a base beside the module base (it was
dropped: `'Net' object has no attribute 'init_weights'` at construction, after porter reported the file converted).
The port builds, matches torch on drawn sizes and keeps images channels-last."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class InitMixin:
    def init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
                nn.init.zeros_(m.bias)

    def describe(self):
        return type(self).__name__


class OpModel(InitMixin, nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 2, 1)
        self.init_weights()
        self.name = self.describe()

    def forward(self, x):
        return self.head(torch.relu(self.conv(x)))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("mixin"), textwrap.dedent(SOURCE))


def test_the_mixin_stays_a_base(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "class InitMixin:" in code and "class OpModel(TorchModule, InitMixin):" in code


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.integers(3, 9), width=st.integers(3, 9))
def test_a_model_with_a_mixin_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])


def test_a_model_with_a_mixin_keeps_images_channels_last(pair):
    assert count_transposes(pair.keras_model, [random_input(0, (2, 3, 7, 6))]) <= 2
