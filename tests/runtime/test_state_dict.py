"""`Module.state_dict()` in a port: torch key -> the variable, written in place (runtime/base.py StateSlot).

CBAM's reference code initialises its model through the state_dict, whose tensors share storage with the
parameters: `for key in self.state_dict(): ... init.kaiming_normal_(self.state_dict()[key], mode='fan_out')`,
`self.state_dict()[key][...] = 0`. The port copied the loop into its constructor, where the port's modules had no
`state_dict` (AttributeError building the model, after porter reported it converted). The port's loop now fills
the variables as torch's does, and the model still loads torch's weights and matches.
"""

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

SOURCE = '''
import torch
import torch.nn as nn
from torch.nn import init


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 5)
        for key in self.state_dict():
            if key.split('.')[-1] == "weight":
                if "conv" in key:
                    init.kaiming_normal_(self.state_dict()[key], mode='fan_out')
                if "bn" in key:
                    self.state_dict()[key][...] = 1
            elif key.split(".")[-1] == 'bias':
                self.state_dict()[key][...] = 0.5

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        return self.fc(x.mean(dim=(2, 3)))
'''


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(SOURCE), input_specs=("3,16,16",)))


def test_an_init_loop_over_the_state_dict_fills_the_variables(pairs):
    model = pairs("net").keras_module.Net()
    state = model.state_dict()
    assert list(state)[:3] == ["conv1.weight", "conv1.bias", "bn1.weight"]
    assert np.all(np.asarray(state["conv1.bias"]) == 0.5) and np.all(np.asarray(state["bn1.weight"]) == 1)
    assert np.all(np.asarray(state["fc.bias"]) == 0.5)
    kernel = np.asarray(state["conv1.weight"])
    assert kernel.std() > 0.1  # kaiming_normal_ with fan_out = 8 * 9: std ~0.17 (the Keras default is smaller)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), size=st.integers(8, 21))
def test_the_port_loads_torchs_weights_and_matches(pairs, seed, batch, size):
    assert_same_outputs(pairs("net"), [random_input(seed, (batch, 3, size, size + 1))], tolerance=1e-4)
