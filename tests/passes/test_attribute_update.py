"""In-place arithmetic on an attribute (porter/passes/statements.py `attribute_update`) against real torch.

timm's ConvNeXt scales its head in an init function handed every submodule (`module.weight.data.mul_(scale)`);
before, the port computed `module.weight.data * scale` and dropped it. The weights the port's own `__init__`
leaves (nothing loaded) must equal torch's: a Linear's and a convolution's weight (stored transposed / HWIO), a
parameter of the class itself, in `__init__` and in a module-level init function, with hypothesis-drawn operands.
"""

import textwrap

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import port
from tests.rules.test_init_ops import keras_state

UPDATE_MODEL = '''
import torch
import torch.nn as nn


def _init_weights(module, name=None, scale=1.0, shift=0.0):
    if isinstance(module, nn.Linear):
        nn.init.constant_(module.weight, 0.25)
        nn.init.constant_(module.bias, -0.5)
        if name and 'head' in name:
            module.weight.data.mul_(scale)
            module.bias.data.add_(shift)


class UpdateModel(nn.Module):
    def __init__(self, scale=3.0, shift=0.5, low=-1.0):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.gamma = nn.Parameter(torch.arange(4.0) - 1.5)
        self.head = nn.Linear(4, 5)
        with torch.no_grad():
            self.conv.weight.copy_(torch.arange(108.0).view(4, 3, 3, 3) / 50.0 - 1.0)
            self.conv.bias.fill_(0.25)
        _init_weights(self.head, 'head', scale, shift)
        self.conv.weight.data.mul_(scale)
        self.conv.weight.data.clamp_(min=low)
        self.gamma.data.sub_(shift)
        with torch.no_grad():
            self.gamma.div_(scale)

    def forward(self, x):
        x = self.conv(x) * self.gamma.view(1, -1, 1, 1)
        return self.head(x.mean((2, 3)))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("update_model"), textwrap.dedent(UPDATE_MODEL))


@settings(max_examples=8, deadline=None)
@given(scale=st.floats(0.1, 10), shift=st.floats(-5, 5), low=st.floats(-2, 1))
def test_in_place_updates_of_attributes_match_torch(pair, scale, shift, low):
    torch_model = pair.torch_module.UpdateModel(scale, shift, low)
    keras_model = pair.keras_module.UpdateModel(scale, shift, low)
    expected, actual = torch_model.state_dict(), keras_state(keras_model)
    for key in ("conv.weight", "conv.bias", "gamma", "head.weight", "head.bias"):
        np.testing.assert_allclose(actual[key], expected[key].numpy(), rtol=1e-6, atol=1e-6, err_msg=key)
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype("float32")
    np.testing.assert_allclose(np.asarray(keras_model(x)), torch_model(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_port_assigns_the_update_in_place(pair):
    text = (pair.out_dir / "op_model_keras.py").read_text()
    assert 'assign_in_place(module, "weight", module.weight * scale)' in text
    assert 'assign_in_place(self.conv, "weight", ' in text and ".data" not in text
