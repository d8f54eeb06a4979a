"""Tests of the in-place initialiser rules (porter/rules/init_ops.py) against real torch.

`zero_`, `fill_` and `copy_` are exact, so the Keras model built by the port's own `__init__` (no weights loaded)
must hold torch's values: on parameters, persistent and non-persistent buffers and layer weights (a convolution's
HWIO kernel gets copy_'s source through its load-time transform), in `__init__`, in a `reset_parameters` helper
and in `_init_weights(module)` applied to every submodule. `normal_` and `uniform_` are checked by their
statistics (sample mean and standard deviation within a few standard errors, bounds) with hypothesis-drawn
arguments, on the same targets. In forward, on local channels-last tensors, all five are compared with torch
(random ones by shape and statistics). An end-to-end test loads torch's weights and compares outputs.
"""

import math
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.harness import import_path
from tests.rules.op_ports import assert_same_outputs, port, random_input

INIT_MODEL = '''
import torch
import torch.nn as nn


class InitModel(nn.Module):
    def __init__(self, n=6, value=0.5, mean=0.0, std=1.0, low=-1.0, high=1.0):
        super().__init__()
        self.conv = nn.Conv2d(3, n, 3, padding=1)
        self.lin = nn.Linear(n, 4)
        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
        self.scale = nn.Parameter(torch.empty(n))
        self.noise = nn.Parameter(torch.empty(64, 64))
        self.spread = nn.Parameter(torch.empty(64, 64))
        self.register_buffer("offset", torch.ones(1, n, 1, 1))
        self.register_buffer("mask", torch.ones(n), persistent=False)
        self.scale.data.fill_(value)
        self.offset.zero_()
        self.mask.fill_(-value)
        self.noise.data.normal_(mean, std)
        self.spread.data.uniform_(low, high)
        self.conv.bias.data.zero_()
        self.layers[1].bias.data.fill_(value * 2)
        self.reset_parameters(n)
        self.apply(self._init_weights)

    def reset_parameters(self, n):
        with torch.no_grad():
            self.conv.weight.copy_(torch.arange(n * 27.0).view(n, 3, 3, 3) / 100.0)
            self.lin.bias.copy_(torch.tensor([1.0, -2.0, 3.0, -4.0]))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=0.5)
            if module.bias is not None and module is not self.lin:
                module.bias.data.zero_()

    def forward(self, x):
        y = self.conv(x) * self.scale.view(1, -1, 1, 1) + self.offset
        y = y + self.mask.view(1, -1, 1, 1)
        return self.lin(y.mean(dim=(2, 3)))
'''
EXACT = ("scale", "offset", "conv.bias", "conv.weight", "lin.bias", "layers.0.bias", "layers.1.bias")


@pytest.fixture(scope="module")
def init_pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("init_model"), textwrap.dedent(INIT_MODEL))


def built_models(pair, **args):
    """The torch model and the Keras port as their own constructors leave them (seeded, nothing loaded)."""
    torch.manual_seed(0)
    return pair.torch_module.InitModel(**args), pair.keras_module.InitModel(**args)


def keras_state(model):
    """{torch key: array in torch's layout} of a Keras port, inverting each entry's load-time transform."""
    state = {}
    for entry in model.torch_state():
        value = np.asarray(entry.variable)
        if entry.to_keras is not None:  # only the conv kernel here: HWIO -> OIHW
            value = np.transpose(value, (3, 2, 0, 1))
        state[entry.key] = value
    return state


@given(n=st.integers(1, 9), value=st.floats(-100, 100, allow_nan=False, width=32))
def test_exact_initialisers_match_torch(init_pair, n, value):
    torch_model, keras_model = built_models(init_pair, n=n, value=value)
    expected, actual = torch_model.state_dict(), keras_state(keras_model)
    assert set(expected) == set(actual)
    for key in EXACT:
        np.testing.assert_array_equal(actual[key], expected[key].numpy(), err_msg=key)
    np.testing.assert_array_equal(np.asarray(keras_model.mask), torch_model.mask.numpy(), err_msg="mask")


def assert_normal(sample, mean, std, what):
    """Sample mean and standard deviation within 5 standard errors of N(mean, std)'s (false alarms ~1e-6)."""
    sample = np.asarray(sample, dtype=np.float64).ravel()
    error = std / np.sqrt(sample.size)
    assert abs(sample.mean() - mean) <= 5 * error + 1e-6, f"{what}: mean {sample.mean()} for {mean}"
    limit = 5 * std / np.sqrt(2 * sample.size) + 1e-6
    assert abs(sample.std() - std) <= limit, f"{what}: std {sample.std()} for {std}"


def assert_uniform(sample, low, high, what):
    """Every value in [low, high] as float32 holds them (2.6e-180 is 0.0 there); mean and standard deviation
    within 5 standard errors of U(low, high)'s."""
    sample = np.asarray(sample, dtype=np.float64).ravel()
    low32, high32 = float(np.float32(low)), float(np.float32(high))
    assert sample.min() >= low32 and sample.max() <= high32, f"{what}: values outside [{low32}, {high32}]"
    width = high - low
    assert abs(sample.mean() - (low + high) / 2) <= 5 * width / np.sqrt(12 * sample.size) + 1e-6, what
    assert abs(sample.std() - width / np.sqrt(12)) <= 5 * width / np.sqrt(12 * sample.size) + 1e-6, what


@given(mean=st.floats(-5, 5), std=st.floats(0.01, 3), low=st.floats(-3, 2), width=st.floats(0.01, 4))
def test_random_initialisers_have_torch_distribution(init_pair, mean, std, low, width):
    high = low + width
    torch_model, keras_model = built_models(init_pair, mean=mean, std=std, low=low, high=high)
    for model, side in ((torch_model, "torch"), (keras_model, "keras")):  # torch passing shows the check is fair
        noise, spread = (np.asarray(model.noise.detach()) if side == "torch" else np.asarray(model.noise),
                         np.asarray(model.spread.detach()) if side == "torch" else np.asarray(model.spread))
        assert noise.shape == (64, 64) and spread.shape == (64, 64)
        assert_normal(noise, mean, std, f"{side} normal_")
        assert_uniform(spread, low, high, f"{side} uniform_")
    state = keras_state(keras_model)
    weights = [state[key].ravel() for key in ("lin.weight", "layers.0.weight", "layers.1.weight")]
    assert_normal(np.concatenate(weights), 0.0, 0.5, "_init_weights normal_ on Linear weights")


LOWERED = (  # source line of INIT_MODEL -> the line the port must hold
    'assign_in_place(self, "scale", full_like(self.scale, value))',  # self.scale.data.fill_(value)
    'assign_in_place(self, "mask", full_like(self.mask, -value))',  # a non-persistent buffer: replaced
    'assign_in_place(self.conv, "bias", zeros_like(self.conv.bias))',  # a layer's weight, `.data` dropped
    'assign_in_place(self.layers_[1], "bias", full_like(self.layers_[1].bias, value * 2))',  # indexed container
    'assign_in_place(self.conv, "weight", view(arange(n * 27.0), n, 3, 3, 3) / 100.0, torch_layout=True)',
    'assign_in_place(module, "weight", normal_like(module.weight, 0.0, 0.5))',  # an untyped helper argument
)


def test_initialisers_lower_to_in_place_assignments(init_pair):
    text = Path(init_pair.keras_module.__file__).read_text()
    missing = [line for line in LOWERED if line not in text]
    assert not missing, missing


def test_fill_of_an_indexed_receiver_fills_that_part_of_the_variable(tmp_path):
    """`weight.data[0].zero_()` writes into part of a variable (a padding row): the port fills the same row of
    the Keras variable in place (tests/rules/test_indexed_fill.py has the other forms)."""
    source = tmp_path / "indexed.py"
    source.write_text(textwrap.dedent('''
        import torch.nn as nn


        class Indexed(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(10, 4)
                self.emb.weight.data[0].zero_()

            def forward(self, x):
                return self.emb(x)
    '''))
    conversion = convert(ConvertOptions(source, tmp_path / "out", input_specs=["5:int64:0:10"]))
    assert conversion.exit_code == 0
    write_tree(tmp_path / "out", conversion.files)
    module = import_path(tmp_path / "out" / "indexed_keras.py")
    weight = np.asarray(module.Indexed().emb.weight)
    assert np.all(weight[0] == 0.0) and np.any(weight[1:] != 0.0)



def test_fills_of_the_parameters_a_loop_names_fill_the_variables(tmp_path):
    """`for name, param in self.named_parameters(): param.data.normal_().mul_(0.1)` / `param.data.fill_(1)`: the
    `.data` of a loop's name, not an attribute, was a stub that raised in `__init__` (exit 1). The variable the name
    holds is now filled in place, each in-place call after the other: the conv's kernel has torch's N(0, 0.1)
    statistics, the norm's weight is 1."""
    source = tmp_path / "param_loop.py"
    source.write_text(textwrap.dedent('''
        import torch.nn as nn


        class ParamLoop(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(16, 64, 3, padding=1)
                self.norm = nn.BatchNorm2d(64)
                for name, param in self.named_parameters():
                    if "conv" in name and "weight" in name:
                        param.data.normal_().mul_(0.1)
                    elif "norm" in name and "weight" in name:
                        param.data.fill_(1)

            def forward(self, x):
                return self.norm(self.conv(x))
    '''))
    conversion = convert(ConvertOptions(source, tmp_path / "out", input_specs=["16,8,8"]))
    assert conversion.exit_code == 0
    write_tree(tmp_path / "out", conversion.files)
    model = import_path(tmp_path / "out" / "param_loop_keras.py").ParamLoop()
    kernel = np.asarray(model.conv.weight)  # 9216 draws: the std within 5% of 0.1, the mean within 0.005
    assert abs(kernel.std() - 0.1) < 0.005 and abs(kernel.mean()) < 0.005
    assert np.all(np.asarray(model.norm.weight) == 1.0)

FORWARD_MODEL = '''
import torch
import torch.nn as nn


class ForwardFills(nn.Module):
    def __init__(self, value=0.5, mean=0.0, std=1.0, low=-1.0, high=1.0):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.value, self.mean, self.std, self.low, self.high = value, mean, std, low, high

    def forward(self, x):
        y = self.conv(x)
        zeros = torch.zeros_like(y)
        zeros.copy_(y)
        zeros.mul_(2.0)
        filled = y.clone().fill_(self.value)
        cleared = y.clone()
        cleared.zero_()
        noise = torch.zeros_like(y)
        noise.normal_(self.mean, self.std)
        spread = torch.zeros_like(y).uniform_(self.low, self.high)
        return zeros + filled + cleared, noise, spread
'''


@pytest.fixture(scope="module")
def forward_pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("forward_fills"), textwrap.dedent(FORWARD_MODEL))


@given(batch=st.integers(1, 3), height=st.sampled_from([1, 5, 16]), width=st.sampled_from([2, 7, 16]),
       value=st.floats(-10, 10), mean=st.floats(-5, 5), std=st.floats(0.1, 3), low=st.floats(-3, 2),
       seed=st.integers(0, 2**16))
def test_forward_fills_match_torch(forward_pair, batch, height, width, value, mean, std, low, seed):
    forward_pair.torch_model.value = forward_pair.keras_model.value = value
    for name, setting in (("mean", mean), ("std", std), ("low", low), ("high", low + 1.0)):
        setattr(forward_pair.torch_model, name, setting)
        setattr(forward_pair.keras_model, name, setting)
    x = random_input(seed, (batch, 3, height, width))
    expected = forward_pair.run_torch([x])
    actual = forward_pair.run_keras([x])
    assert [a.shape for a in actual] == [e.shape for e in expected]
    np.testing.assert_allclose(actual[0], expected[0], rtol=1e-5, atol=1e-5 * (1 + abs(value)))
    if actual[1].size >= 400:  # enough samples for the statistics to mean something
        assert_normal(actual[1], mean, std, "forward normal_")
        assert_uniform(actual[2], low, low + 1.0, "forward uniform_")


END_TO_END = '''
import torch
import torch.nn as nn


class Gate(nn.Module):
    """A gated conv block whose non-persistent buffer and biases come from in-place initialisers."""

    def __init__(self, channels=4):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.gate = nn.Parameter(torch.empty(channels))
        self.register_buffer("bias_shift", torch.empty(1, channels, 1, 1), persistent=False)
        self.reset_parameters()

    def reset_parameters(self):
        self.gate.data.normal_(0.0, 0.1)
        self.conv.bias.data.zero_()
        self.bias_shift.fill_(0.25)

    def forward(self, x):
        y = self.conv(x)
        noise = torch.zeros_like(y)
        noise.fill_(0.125)
        return torch.sigmoid(self.gate.view(1, -1, 1, 1)) * y + self.bias_shift + noise
'''


@given(batch=st.integers(1, 3), height=st.sampled_from([1, 4, 7]), width=st.sampled_from([2, 5, 8]),
       seed=st.integers(0, 2**16))
def test_gate_end_to_end(gate_pair, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(gate_pair, [x], tolerance=1e-5, what=f"gate x{x.shape}")


@pytest.fixture(scope="module")
def gate_pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("gate"), textwrap.dedent(END_TO_END))


torch.set_num_threads(1)


@settings(max_examples=15, deadline=None)
@given(p=st.floats(0.05, 0.95), rows=st.integers(1, 4))
def test_bernoulli_fill_has_torch_distribution(p, rows):
    """x.bernoulli_(p): zeros and ones of x's shape and dtype, ones with probability p (torch's own draw agrees)."""
    from porter.runtime.init_ops import bernoulli_like

    shape = (rows, 4000)
    drawn = np.asarray(bernoulli_like(np.zeros(shape, "float32"), p))
    reference = torch.empty(shape).bernoulli_(p).numpy()
    assert drawn.shape == shape and drawn.dtype == np.float32 and set(np.unique(drawn)) <= {0.0, 1.0}
    bound = 5 * math.sqrt(p * (1 - p) / drawn.size)
    assert abs(drawn.mean() - p) <= bound and abs(reference.mean() - p) <= bound
