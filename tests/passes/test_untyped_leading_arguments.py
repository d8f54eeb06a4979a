"""A block handed a value porter cannot type before a tensor (a Neural ODE's function `self.f(t, x)`, `t` a float the
constructor set): the untyped first argument of a module call was taken for the image, in torch's layout, and the
block converted it channels-last (`to_channels_last(t)`: "'float' object has no attribute 'shape'" when the port
ran). Where a later argument is a tensor, the untyped one is left as it is. Fixed-step RK4 over a conv function,
compared with torch for drawn sizes, batch 1 included."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class ODEFunc(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, padding=1)

    def forward(self, t, x):
        return torch.tanh(self.conv(x)) * (1.0 + t)


class OpModel(nn.Module):
    def __init__(self, dim=4, steps=2):
        super().__init__()
        self.stem = nn.Conv2d(3, dim, 1)
        self.f = ODEFunc(dim)
        self.t0, self.dt, self.steps = 0.0, 0.25, steps

    def forward(self, x):
        x = self.stem(x)
        t = self.t0
        for _ in range(self.steps):
            k1 = self.f(t, x)
            k2 = self.f(t + self.dt / 2, x + self.dt / 2 * k1)
            k3 = self.f(t + self.dt / 2, x + self.dt / 2 * k2)
            k4 = self.f(t + self.dt, x + self.dt * k3)
            x = x + self.dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            t = t + self.dt
        return x
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("ode"), SOURCE, input_specs=("3,7,9",))


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 2), height=st.integers(3, 9), width=st.integers(3, 9), seed=st.integers(0, 2**16))
def test_an_untyped_value_before_a_tensor_is_no_image(pair, batch, height, width, seed):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))], tolerance=1e-5)
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))], tolerance=1e-5, jit=True)
