"""Torch used outside forward's tensor code: `getattr(nn, rnn_type)(...)` over the layers the file names,
`hasattr(F, ...)` decided statically, `nn.init.calculate_gain`, `Variable(x)`, `torch._assert`."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.init_gain import calculate_gain
from tests.rules.op_ports import port

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class Encoder(nn.Module):
    def __init__(self, rnn_type="LSTM", ninp=8, nhid=16):
        super().__init__()
        if rnn_type not in ["LSTM", "GRU"]:
            raise ValueError(rnn_type)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, 1, batch_first=True)
        self.flash = hasattr(F, "scaled_dot_product_attention")
        self.proj = nn.Linear(nhid, 4)
        self.gain = nn.init.calculate_gain("tanh")

    def forward(self, x):
        torch._assert(x.dim() == 3, "batch, time, features")
        x = Variable(x)
        out, _ = self.rnn(x)
        if self.flash:
            out = out * self.gain
        return self.proj(out[:, -1])
'''


@pytest.mark.parametrize("rnn_type", ["LSTM", "GRU"])
def test_layer_chosen_by_name_matches_torch(rnn_type, tmp_path):
    pair = port(tmp_path, SOURCE, input_specs=("5,8",), init_args={"rnn_type": rnn_type})
    text = (tmp_path / "out" / "op_model_keras.py").read_text()
    assert "getattr(nn" not in text and "hasattr(F" not in text and "self.flash = True" in text
    torch_model = pair.torch_module.Encoder(rnn_type=rnn_type).eval()
    keras_model = pair.keras_module.Encoder(rnn_type=rnn_type)
    x = np.random.default_rng(0).standard_normal((3, 5, 8)).astype("float32")
    keras_model(x)
    pair.keras_module.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    assert np.abs(np.asarray(keras_model(x, training=False)) - expected).max() <= 1e-5 * np.abs(expected).max()


@settings(max_examples=25, deadline=None)
@given(nonlinearity=st.sampled_from(["linear", "conv1d", "conv2d", "conv3d", "conv_transpose2d", "sigmoid", "tanh",
                                     "relu", "leaky_relu", "selu"]),
       param=st.one_of(st.none(), st.floats(-10, 10, allow_nan=False), st.integers(-5, 5)))
def test_calculate_gain_matches_torch(nonlinearity, param):
    expected = torch.nn.init.calculate_gain(nonlinearity, param)
    assert math.isclose(calculate_gain(nonlinearity, param), expected, rel_tol=1e-12)


def test_calculate_gain_rejects_what_torch_rejects():
    for nonlinearity, param in (("swish", None), ("leaky_relu", "a"), ("leaky_relu", True)):
        with pytest.raises(ValueError):
            torch.nn.init.calculate_gain(nonlinearity, param)
        with pytest.raises(ValueError):
            calculate_gain(nonlinearity, param)


@pytest.mark.parametrize("nonlinearity", ["relu", "leaky_relu", "tanh", "selu", "linear", "sigmoid"])
@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
def test_kaiming_std_uses_torch_gains(nonlinearity, mode):
    from porter.runtime.helpers import _kaiming_std

    weight = torch.empty(12, 5, 3, 3)
    fan = torch.nn.init._calculate_correct_fan(weight, mode)
    expected = torch.nn.init.calculate_gain(nonlinearity, 0.2) / math.sqrt(fan)
    assert math.isclose(_kaiming_std(np.zeros((12, 5, 3, 3)), 0.2, mode, nonlinearity), expected, rel_tol=1e-9)


DICT_SOURCE = '''
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.table = self.defaults()

    def forward(self, x):
        y = self.conv(x)
        return y * self.table["scale"]

    def defaults(self):
        return {"scale": torch.tensor([1.5]), "shift": torch.tensor([2], dtype=torch.int32), "name": "scaled"}

    def legacy_keys(self, state_dict, prefix):
        defaults = {"zero_point": torch.tensor([0], dtype=torch.int32), "scale": torch.tensor([1.0])}
        for key, value in defaults.items():
            state_dict.setdefault(prefix + key, value)
'''


def test_dict_literals_of_torch_values_are_translated(tmp_path):
    """`{"scale": torch.tensor([1.0]), ...}` in a method (torchvision's quantization `_load_from_state_dict`) was
    copied verbatim: `torch` undefined in the port (exit 3). Its torch values are translated, the rest kept."""
    pair = port(tmp_path, DICT_SOURCE, input_specs=("3,6,6",))
    text = (tmp_path / "out" / "op_model_keras.py").read_text()
    assert "torch." not in text.split("# --- ported from")[-1] and '"name": "scaled"' in text
    torch_model = pair.torch_module.Scaled().eval()
    keras_model = pair.keras_module.Scaled()
    pair.keras_module.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype("float32")
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    assert np.abs(np.asarray(keras_model(x, training=False)) - expected).max() <= 1e-5 * np.abs(expected).max()
    state = {}
    keras_model.legacy_keys(state, "se.")
    assert sorted(state) == ["se.scale", "se.zero_point"] and int(np.asarray(state["se.zero_point"])[0]) == 0


THIRD_PARTY_SOURCE = '''
import torch.nn as nn


def get_attn(kind):
    if kind == "se":
        import jax.numpy as jnp
        from somelib.layers import SEModule
        return SEModule, jnp.load
    return nn.ReLU, None


class Net(nn.Module):
    def __init__(self, kind="relu"):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = get_attn(kind)[0]()

    def forward(self, x):
        return self.act(self.fc(x))
'''


def test_third_party_names_used_as_values_are_stubs(tmp_path):
    """`module_cls = SEModule` of a package file the linker did not reach (here imported where it is used, so torch
    runs the other path), `load_fn=jnp.load` of an import inside a function: the imports are not carried over, so the names were undefined in the port (exit 3). Each is a stub
    (listed, exit 1) that raises when called; the path that does not reach it runs and matches torch."""
    from porter.convert import ConvertOptions, convert
    from porter.output import write_tree
    from porter.verify.harness import PortedPair

    source = tmp_path / "op_model.py"
    source.write_text(THIRD_PARTY_SOURCE)
    conversion = convert(ConvertOptions(source, tmp_path / "out", input_specs=["4"]))
    assert conversion.exit_code == 1
    constructs = {u["construct"] for entry in conversion.manifest["sources"][0]["classes"]
                  for u in entry["unsupported"]}
    assert constructs == {"somelib.layers.SEModule", "jax.numpy.load"}
    write_tree(tmp_path / "out", conversion.files)
    pair = PortedPair(tmp_path / "out")
    torch_model = pair.torch_module.Net().eval()
    keras_model = pair.keras_module.Net()
    pair.keras_module.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((3, 4)).astype("float32")
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    assert np.abs(np.asarray(keras_model(x, training=False)) - expected).max() <= 1e-5 * np.abs(expected).max()
    with pytest.raises(NotImplementedError, match="somelib.layers.SEModule"):
        pair.keras_module.Net(kind="se")


BARE_IMPORT_SOURCE = '''
from functools import partial

import torch
from torch.nn import LayerNorm, Linear, Module, Sequential

LinearNoBias = partial(Linear, bias=False)
Norm = partial(LayerNorm, eps=1e-6)


class Block(Module):
    def __init__(self, dim=8, make=Sequential):
        super().__init__()
        self.net = make(LinearNoBias(dim, dim), Norm(dim))

    def forward(self, x):
        return torch.relu(self.net(x))
'''


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), tokens=st.integers(1, 5), seed=st.integers(0, 2**31 - 1))
def test_layers_imported_by_bare_name_work_as_values(tmp_path_factory, batch, tokens, seed):
    """`from torch.nn import Linear` then `partial(Linear, bias=False)` at module level (lucidrains'
    perceiver-pytorch) or `make=Sequential` as a default: the names map to their ports as `nn.Linear` does (they
    were copied as they are: `Linear` undefined in the port, exit 3)."""
    pair = _bare_import_pair(tmp_path_factory)
    torch_model = pair.torch_module.Block().eval()
    keras_model = pair.keras_module.Block()
    pair.keras_module.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    x = np.random.default_rng(seed).standard_normal((batch, tokens, 8)).astype("float32")
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    assert np.abs(np.asarray(keras_model(x, training=False)) - expected).max() <= 1e-5 * max(np.abs(expected).max(), 1)


_BARE_IMPORT_PAIRS = {}


def _bare_import_pair(tmp_path_factory):
    if "pair" not in _BARE_IMPORT_PAIRS:
        _BARE_IMPORT_PAIRS["pair"] = port(tmp_path_factory.mktemp("bare"), BARE_IMPORT_SOURCE, input_specs=("4,8",))
    return _BARE_IMPORT_PAIRS["pair"]
