"""porter/rules/init_functions.py: torch.nn.init's initialisers are one rule each. A constructor's
`nn.init.constant_(self.fc.bias, c)` gives the port's variable torch's values; a reference carried over untranslated
(MONAI's `def icnr_init(conv, upsample_factor, init=nn.init.kaiming_normal_)`) names the runtime's function (porter's
own check refused the port: `nn` undefined). Also `torch.jit.isinstance(x, torch.Tensor)` (MONAI's UpCat), the
builtin when run eagerly: it was a stub."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.rules.init_functions import INITIALISERS
from porter.rules.registry import function_rule_named
from porter.runtime import helpers
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

MODEL = '''
import torch
import torch.nn as nn


def scaled_init(layer, gain, init=nn.init.kaiming_normal_):
    """carried over untranslated: called with a layer, never with tensors"""
    init(layer.weight, a=gain)
    return layer


class Skip(nn.Module):
    def forward(self, x, extra=None):
        if extra is not None and torch.jit.isinstance(extra, torch.Tensor):
            return x + extra
        return x


class OpModel(nn.Module):
    def __init__(self, channels=5, bias=0.25, scale=1.5):
        super().__init__()
        self.conv = scaled_init(nn.Conv2d(3, channels, 3, padding=1), 0.0)
        self.fc = nn.Linear(channels, channels)
        self.mix = nn.Linear(channels, channels, bias=False)
        self.skip = Skip()
        nn.init.constant_(self.fc.bias, bias)
        nn.init.constant_(self.fc.weight, scale)
        nn.init.eye_(self.mix.weight)
        nn.init.zeros_(self.conv.bias)

    def forward(self, x):
        y = self.skip(self.conv(x), x.mean(1, keepdim=True))
        y = self.skip(y)
        return self.mix(self.fc(y.mean((2, 3))))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), MODEL))("init")


def test_every_initialiser_is_a_rule_with_torchs_function_and_a_runtime_one():
    for name, runtime in INITIALISERS.items():
        rule = function_rule_named(f"torch.nn.init.{name}")
        assert rule is not None and rule.runtime == runtime
        assert callable(getattr(torch.nn.init, name)) and callable(getattr(helpers, runtime))


@settings(max_examples=6)
@given(channels=st.integers(1, 6), bias=st.floats(-3, 3, allow_nan=False, width=32),
       scale=st.floats(-3, 3, allow_nan=False, width=32))
def test_constructor_initialisers_give_torchs_values(pair, channels, bias, scale):
    torch_model = pair.torch_module.OpModel(channels, bias, scale)
    keras_model = pair.keras_module.OpModel(channels, bias, scale)
    keras_model(random_input(0, (1, 3, 5, 5)))
    for layer, name in (("fc", "bias"), ("fc", "weight"), ("mix", "weight"), ("conv", "bias")):
        want = getattr(getattr(torch_model, layer), name).detach().numpy()
        got = np.asarray(getattr(getattr(keras_model, layer), name))
        np.testing.assert_array_equal(got if got.shape == want.shape else got.T, want)


def test_a_carried_default_names_the_runtime_initialiser_drawing_torchs_spread(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "def scaled_init(layer, gain, init=init_kaiming_normal):" in code
    torch_model = pair.torch_module.OpModel(channels=64)
    keras_model = pair.keras_module.OpModel(channels=64)
    keras_model(random_input(0, (1, 3, 5, 5)))
    kernel = np.asarray(keras_model.conv.weight)
    expected = math.sqrt(2.0 / (3 * 3 * 3))  # kaiming_normal_, a=0, fan_in of a (64, 3, 3, 3) weight
    assert abs(float(torch_model.conv.weight.std()) - expected) < 0.1 * expected
    assert abs(float(kernel.std()) - expected) < 0.1 * expected


@settings(max_examples=5)
@given(batch=st.integers(1, 3), size=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_jit_isinstance_is_the_builtin(pair, batch, size, seed):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, size, size))], jit=True)


SPREAD = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(32, 64, 3, stride=2, padding=1, groups=2)
        self.up = nn.ConvTranspose2d(64, 16, 4, stride=2, padding=1, groups=4)
        self.fc = nn.Linear(16, 48)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        nn.init.orthogonal_(self.up.weight)
        nn.init.orthogonal_(self.fc.weight, gain=2.0)

    def forward(self, x):
        return self.fc(self.up(self.conv(x)).mean((2, 3)))
'''


def test_initialisers_count_a_kernels_fans_and_rows_in_torchs_order(tmp_path):
    """resnet's `kaiming_normal_(m.weight, mode="fan_out")` on convolutions (torch's (O, I/g, k, k); the port's
    kernel (k, k, I/g, O) was counted as if it were torch's: the spread of a from-scratch run was wrong) and
    `orthogonal_`'s rows (torch's first axis against the rest)."""
    pair = port(tmp_path, SPREAD, input_specs=("32,6,6",))
    torch_model = pair.torch_module.OpModel()
    keras_model = pair.keras_module.OpModel()
    conv_std = math.sqrt(2.0 / (64 * 9))  # fan_out of the (64, 16, 3, 3) weight: 64 * 9
    for kernel in (torch_model.conv.weight.detach().numpy(), np.asarray(keras_model.conv.weight)):
        assert abs(float(kernel.std()) - conv_std) < 0.05 * conv_std
    # ConvTranspose2d(64, 16, 4, groups=4): torch's weight (64, 4, 4, 4), 64 orthonormal columns of 64 rows
    for weight in (torch_model.up.weight.detach().numpy(), _in_torch_order(keras_model.up)):
        rows = weight.reshape(64, -1)
        np.testing.assert_allclose(rows @ rows.T, np.eye(64), atol=1e-4)
    for weight in (torch_model.fc.weight.detach().numpy(), np.asarray(keras_model.fc.weight)):
        np.testing.assert_allclose(weight.T @ weight, 4.0 * np.eye(16), atol=1e-4)  # (48, 16): columns, gain 2


def _in_torch_order(layer):
    """A transposed convolution's stored kernel back in torch's (I, O/g, k, k) order."""
    stored = np.asarray(layer.weight)
    shape, to_keras = layer.weight.porter_torch_view
    index = to_keras(np.arange(int(np.prod(shape))).reshape(shape))
    flat = np.empty(int(np.prod(shape)), stored.dtype)
    flat[index.ravel()] = stored.ravel()
    return flat.reshape(shape)
