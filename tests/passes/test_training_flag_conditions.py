"""`self.training` joined with a tensor condition (Glow's ActNorm: `if self.training and self.initialized.item() ==
0:` runs its data-dependent initialisation once): the port's `tf.logical_and(training, ...)` raised where Keras
hands `training=None` (any call outside `fit`); torch's flag is False then. The port builds, matches torch in
evaluation on drawn inputs, and runs the initialisation on a training call as torch does."""

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class ActNorm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, c, 1, 1))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

    def forward(self, x):
        if self.training and self.initialized.item() == 0:
            with torch.no_grad():
                self.loc.data.copy_(-x.mean((0, 2, 3), keepdim=True))
            self.initialized.fill_(1)
        return x + self.loc


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.norm = ActNorm(4)

    def forward(self, x):
        return self.norm(self.conv(x))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("actnorm"), textwrap.dedent(SOURCE), input_specs=("3,9,11",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2))
def test_training_flag_condition_matches_torch(pair, seed, batch):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, 9, 11))])


def test_a_call_without_training_runs(pair):
    out = pair.keras_model(random_input(0, (2, 3, 9, 11)))  # (Keras hands training=None)
    assert np.isfinite(np.asarray(out)).all()
