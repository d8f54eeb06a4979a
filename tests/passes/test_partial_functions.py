"""A partial of a torch function held by an attribute or a local (`self.up = partial(F.interpolate, scale_factor=2,
mode="nearest")`, GAN code's `partial(F.leaky_relu, negative_slope=0.2)`): the port called the runtime function with
channels-last images where it takes torch's order (a shape error, or wrong numbers where sizes agreed). A call of
such a partial is now the rule's call with the held arguments, laid out like any other: the port matches torch
and keeps the images channels-last (2 Transposes, the model's boundary)."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
from functools import partial

import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self, channels=6):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.up = partial(F.interpolate, scale_factor=2, mode="nearest")
        self.act = partial(F.leaky_relu, negative_slope=0.2)
        self.attend = partial(F.softmax, dim=1)
        self.out = nn.Conv2d(channels, 3, 1)

    def forward(self, x):
        pool = partial(F.avg_pool2d, kernel_size=2)
        y = self.act(self.up(self.conv(x)))
        y = y * self.attend(y)
        return self.out(pool(y, stride=1))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("partials"), textwrap.dedent(SOURCE), input_specs=("3,6,5",))


def test_partial_calls_are_the_rules(pair):
    call = (pair.out_dir / "op_model_keras.py").read_text().split("def call", 1)[1]
    assert "interpolate(" in call and "self.up(" not in call and "self.attend(" not in call


def test_images_stay_channels_last(pair):
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 6, 5))) == 2


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), height=st.sampled_from([2, 5, 6]),
       width=st.sampled_from([3, 4, 7]))
def test_port_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])
