"""Property tests of the weight-norm rules (porter/rules/weight_norm.py, runtime porter/runtime/weight_norm.py) against
real torch: legacy `weight_norm` (weight_g/weight_v) and `parametrizations.weight_norm` (original0/original1) on
Conv1d/Conv2d/Linear/ConvTranspose1d/ConvTranspose2d with groups, dim 0 / 1 / 2 / None, eagerly and under XLA; a
TCN residual block (weight-normed dilated causal convolutions, as in locuslab's TCN); torchaudio wav2vec2's
ConvolutionalPositionalEmbedding as published (tests/rules/wav2vec2_positional.py); removal; gradients of g and v;
spectral norm (legacy and parametrizations) in evaluation and through a training step (power iteration)."""

import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.harness import PortedPair
from porter.verify.torch_bridge import copy_torch_weights
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

pytestmark = pytest.mark.filterwarnings("ignore:.*weight_norm.* is deprecated:FutureWarning")

SEQUENCE_MODEL = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrizations, weight_norm


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = weight_norm(nn.Conv1d(4, 6, 3, padding=1, groups=2))
        self.b = parametrizations.weight_norm(nn.ConvTranspose1d(6, 4, 3, stride=2, groups=2), dim=1)
        self.c = weight_norm(nn.Conv1d(4, 5, 2, dilation=2), dim=None)
        self.d = nn.utils.parametrizations.weight_norm(nn.Conv1d(5, 5, 3, padding=1, groups=5), name="weight", dim=2)
        self.e = torch.nn.utils.weight_norm(nn.Linear(5, 3), dim=1)
        self.f = parametrizations.weight_norm(nn.ConvTranspose1d(5, 5, 2, groups=5), dim=0)

    def forward(self, x):
        y = F.gelu(self.a(x))
        y = self.b(y)
        y = self.c(y)
        y = self.f(self.d(y))
        return self.e(y.transpose(1, 2))
'''

IMAGE_MODEL = '''
import torch
import torch.nn as nn
from torch.nn.utils import parametrizations, weight_norm


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = weight_norm(nn.Conv2d(3, 6, (3, 2), padding=1), dim=1)
        self.b = parametrizations.weight_norm(nn.ConvTranspose2d(6, 4, 3, stride=2, groups=2))
        self.c = weight_norm(nn.Conv2d(4, 4, 1, groups=2), dim=-1)

    def forward(self, x):
        return self.c(torch.relu(self.b(self.a(x))))
'''

REMOVED_MODEL = '''
import torch.nn as nn
from torch.nn.utils import parametrize, parametrizations, remove_weight_norm, weight_norm


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = weight_norm(nn.Conv1d(3, 4, 3))
        remove_weight_norm(self.a)
        self.b = parametrizations.weight_norm(nn.Conv1d(4, 4, 3, padding=1), dim=1)
        parametrize.remove_parametrizations(self.b, "weight")

    def forward(self, x):
        return self.b(self.a(x))
'''

TCN_MODEL = '''
import torch.nn as nn
from torch.nn.utils import weight_norm


class Chomp1d(nn.Module):
    def __init__(self, chomp_size):
        super().__init__()
        self.chomp_size = chomp_size

    def forward(self, x):
        return x[:, :, :-self.chomp_size].contiguous()


class TemporalBlock(nn.Module):
    def __init__(self, n_inputs=3, n_outputs=8, kernel_size=3, stride=1, dilation=2, padding=4, dropout=0.2):
        super().__init__()
        self.conv1 = weight_norm(nn.Conv1d(n_inputs, n_outputs, kernel_size,
                                           stride=stride, padding=padding, dilation=dilation))
        self.chomp1 = Chomp1d(padding)
        self.relu1 = nn.ReLU()
        self.dropout1 = nn.Dropout(dropout)
        self.conv2 = weight_norm(nn.Conv1d(n_outputs, n_outputs, kernel_size,
                                           stride=stride, padding=padding, dilation=dilation))
        self.chomp2 = Chomp1d(padding)
        self.relu2 = nn.ReLU()
        self.dropout2 = nn.Dropout(dropout)
        self.net = nn.Sequential(self.conv1, self.chomp1, self.relu1, self.dropout1,
                                 self.conv2, self.chomp2, self.relu2, self.dropout2)
        self.downsample = nn.Conv1d(n_inputs, n_outputs, 1) if n_inputs != n_outputs else None
        self.relu = nn.ReLU()
        self.init_weights()

    def init_weights(self):
        self.conv1.weight.data.normal_(0, 0.01)
        self.conv2.weight.data.normal_(0, 0.01)
        if self.downsample is not None:
            self.downsample.weight.data.normal_(0, 0.01)

    def forward(self, x):
        out = self.net(x)
        res = x if self.downsample is None else self.downsample(x)
        return self.relu(out + res)
'''

MODELS = {"sequence": (SEQUENCE_MODEL, "4,9"), "image": (IMAGE_MODEL, "3,5,6"), "removed": (REMOVED_MODEL, "3,9"),
          "tcn": (TCN_MODEL, "3,20")}
POSITIONAL_SOURCE = Path(__file__).with_name("wav2vec2_positional.py")
POSITIONAL_ARGS = {"embed_dim": 8, "kernel_size": 4, "groups": 2}


def _port_positional(folder):
    options = ConvertOptions(POSITIONAL_SOURCE, folder / "out", class_name="ConvolutionalPositionalEmbedding",
                             init_args=POSITIONAL_ARGS, input_specs=["7,8"])
    conversion = convert(options)
    assert conversion.exit_code == 0, (conversion.exit_code, conversion.manifest)
    write_tree(folder / "out", conversion.files)
    return PortedPair(folder / "out", init_args=POSITIONAL_ARGS)


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    def make(name):
        if name == "positional":
            return _port_positional(tmp_path_factory.mktemp(name))
        source, spec = MODELS[name]
        return port(tmp_path_factory.mktemp(name), textwrap.dedent(source), input_specs=(spec,))

    return cached(make)


def _move_magnitudes(pair, seed):
    """Scale every g (and shift v) off torch's initial g = ||v||, then load the torch weights into the port again:
    with g = ||v|| a dropped or misplaced g would go unseen."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in pair.torch_model.named_parameters():
            if name.endswith(("_g", "original0")):
                parameter.mul_(0.5 + torch.rand(parameter.shape, generator=generator))
            elif name.endswith(("_v", "original1")):
                parameter.add_(0.1 * torch.randn(parameter.shape, generator=generator))
    copy_torch_weights(pair.torch_model, pair.keras_model)


@pytest.mark.parametrize("name", ["sequence", "image", "removed", "tcn", "positional"])
@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), extra=st.integers(0, 4), seed=st.integers(0, 2**16))
def test_weight_norm_matches_torch(ported, name, batch, extra, seed):
    pair = ported(name)
    _move_magnitudes(pair, seed)
    shape = {"sequence": (4, 5 + extra), "image": (3, 4 + extra, 5 + extra // 2), "removed": (3, 6 + extra),
             "tcn": (3, 9 + 2 * extra), "positional": (5 + extra, 8)}[name]
    x = random_input(seed, (batch,) + shape)
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} x{x.shape}")
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} x{x.shape} (XLA)", jit=True)


def test_state_dict_names_are_torchs(ported):
    """The port loads exactly the keys torch's state_dict holds: legacy g/v and parametrizations original0/1."""
    from porter.runtime.base import collect_state

    for name in ("sequence", "removed", "positional"):
        pair = ported(name)
        keys = sorted(entry.key for entry in collect_state(pair.keras_model))
        assert keys == sorted(pair.torch_model.state_dict()), name


def test_positional_embedding_keeps_torch_class_name(ported):
    """torchaudio checks `self.conv.__class__.__name__ == "ParametrizedConv1d"`: the port's class has that name."""
    assert type(ported("positional").keras_model.conv).__name__ == "ParametrizedConv1d"


@pytest.mark.parametrize("api", ["legacy", "parametrizations"])
@pytest.mark.parametrize("layer,dim", [("conv1d", 0), ("conv1d", None), ("conv_transpose1d", 1), ("linear", 1)])
def test_gradients_of_g_and_v_match_torch(api, layer, dim):
    """Training updates g and v as torch does: their gradients (in torch's order) equal torch's."""
    import tensorflow as tf

    from porter.runtime import conv, linear
    from porter.runtime.base import load_state_dict, to_channels_first, to_channels_last
    from porter.runtime.weight_norm import parametrized_weight_norm, weight_norm

    torch.manual_seed(0)
    make = {"conv1d": (torch.nn.Conv1d, conv.Conv1d, (4, 6, 3), {"groups": 2}, (2, 4, 7)),
            "conv_transpose1d": (torch.nn.ConvTranspose1d, conv.ConvTranspose1d, (4, 6, 3), {"groups": 2}, (1, 4, 5)),
            "linear": (torch.nn.Linear, linear.Linear, (5, 3), {}, (3, 5))}[layer]
    torch_apply = torch.nn.utils.weight_norm if api == "legacy" else torch.nn.utils.parametrizations.weight_norm
    keras_apply = weight_norm if api == "legacy" else parametrized_weight_norm
    torch_layer = torch_apply(make[0](*make[2], **make[3]), dim=dim)
    keras_layer = keras_apply(make[1](*make[2], **make[3]), dim=dim)
    with torch.no_grad():
        for parameter in torch_layer.parameters():
            parameter.mul_(0.5 + torch.rand(parameter.shape))
    load_state_dict(keras_layer, {k: v.detach().numpy() for k, v in torch_layer.state_dict().items()})
    x = np.random.default_rng(1).standard_normal(make[4]).astype(np.float32)
    weights = np.random.default_rng(2).standard_normal(torch_layer(torch.from_numpy(x)).shape).astype(np.float32)
    (torch_layer(torch.from_numpy(x)) * torch.from_numpy(weights)).sum().backward()
    spatial = layer != "linear"
    with tf.GradientTape() as tape:
        y = keras_layer(to_channels_last(tf.constant(x)) if spatial else tf.constant(x))
        loss = tf.reduce_sum((to_channels_first(y) if spatial else y) * weights)
    entries = {e.key: e for e in keras_layer.torch_state("")}
    variables = [entries[k].variable for k in entries if not k.endswith("bias")]
    gradients = dict(zip([k for k in entries if not k.endswith("bias")], tape.gradient(loss, variables)))
    for key, parameter in torch_layer.named_parameters():
        if key.endswith("bias"):
            continue
        transform = entries[key].to_keras or (lambda a: a)
        np.testing.assert_allclose(gradients[key].numpy(), transform(parameter.grad.numpy()), rtol=1e-4, atol=1e-5,
                                   err_msg=key)


SPECTRAL_MODEL = '''
import torch
import torch.nn as nn
from torch.nn.utils import parametrizations, spectral_norm


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = spectral_norm(nn.Conv2d(3, 6, 3, padding=1))
        self.b = parametrizations.spectral_norm(nn.ConvTranspose2d(6, 4, 3, stride=2, groups=2))
        self.c = nn.utils.spectral_norm(nn.Conv2d(4, 4, 1), n_power_iterations=2, dim=1)
        self.d = parametrizations.spectral_norm(nn.Linear(4, 3), n_power_iterations=3)

    def forward(self, x):
        y = self.c(torch.nn.functional.leaky_relu(self.b(self.a(x)), 0.2))
        return self.d(y.mean((2, 3)))
'''


@pytest.fixture(scope="module")
def spectral(tmp_path_factory):
    return port(tmp_path_factory.mktemp("spectral"), textwrap.dedent(SPECTRAL_MODEL), input_specs=("3,5,6",))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), extra=st.integers(0, 3), seed=st.integers(0, 2**16))
def test_spectral_norm_matches_torch_in_evaluation(spectral, batch, extra, seed):
    """After torch's training-time power iterations moved u and v, the evaluated port equals torch (legacy and
    parametrizations), eagerly and under XLA."""
    torch.manual_seed(seed)
    spectral.torch_model.train()
    for _ in range(2):
        spectral.torch_model(torch.randn(2, 3, 5, 6))
    spectral.torch_model.eval()
    copy_torch_weights(spectral.torch_model, spectral.keras_model)
    x = random_input(seed, (batch, 3, 4 + extra, 5 + extra))
    assert_same_outputs(spectral, [x], tolerance=1e-5, what=f"spectral x{x.shape}")
    assert_same_outputs(spectral, [x], tolerance=1e-5, what=f"spectral x{x.shape} (XLA)", jit=True)


LEARNING_RATE = 0.5


def assert_state_matches(torch_model, keras_model, what):
    expected = {k: v.detach().numpy() for k, v in torch_model.state_dict().items()}
    got = {e.key: e for e in keras_model.torch_state("")}
    assert sorted(expected) == sorted(got), what
    for key, value in expected.items():
        entry = got[key]
        want = entry.to_keras(value) if entry.to_keras is not None else value
        np.testing.assert_allclose(entry.variable.numpy(), want, rtol=1e-4, atol=1e-5, err_msg=f"{what}: {key}")


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), extra=st.integers(0, 3), seed=st.integers(0, 2**16))
def test_a_spectral_norm_training_step_updates_u_v_and_the_weights_as_torch(spectral, batch, extra, seed):
    """Each training forward runs torch's power iteration (`n_power_iterations` steps; the legacy API updates v then
    u, the parametrizations API u then v) and stores the new u and v: one SGD step on both models from the same
    weights, then a second training forward and an evaluation give torch's outputs, u, v and weights."""
    torch_model, keras_model = spectral.torch_model, spectral.keras_model
    torch.manual_seed(seed)
    torch_model.train()
    for _ in range(2):  # u and v moved off their initial values by torch's own iterations
        torch_model(torch.randn(2, 3, 5, 6))
    copy_torch_weights(torch_model, keras_model)
    x = random_input(seed, (batch, 3, 4 + extra, 5 + extra))
    weights = np.random.default_rng(seed).standard_normal((batch, 3)).astype(np.float32)

    torch_out = torch_model(torch.from_numpy(x))
    (torch_out * torch.from_numpy(weights)).sum().backward()
    with torch.no_grad():
        for parameter in torch_model.parameters():
            parameter.sub_(LEARNING_RATE * parameter.grad)
            parameter.grad = None
    with tf.GradientTape() as tape:
        keras_out = keras_model(x, training=True)
        loss = tf.reduce_sum(keras_out * weights)
    variables = keras_model.trainable_variables
    for variable, gradient in zip(variables, tape.gradient(loss, variables), strict=True):
        variable.assign_sub(LEARNING_RATE * gradient)
    scale = max(1.0, float(np.abs(torch_out.detach().numpy()).max()))
    np.testing.assert_allclose(np.asarray(keras_out), torch_out.detach().numpy(), rtol=1e-4, atol=1e-5 * scale,
                               err_msg="training forward")
    assert_state_matches(torch_model, keras_model, "after one step")

    torch_again = torch_model(torch.from_numpy(x)).detach().numpy()  # another iteration, on the new weights
    np.testing.assert_allclose(np.asarray(keras_model(x, training=True)), torch_again, rtol=1e-4, atol=1e-5 * scale,
                               err_msg="second training forward")
    assert_state_matches(torch_model, keras_model, "after a second training forward")
    torch_model.eval()
    with torch.no_grad():
        evaluated = torch_model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(np.asarray(keras_model(x, training=False)), evaluated, rtol=1e-4, atol=1e-5 * scale,
                               err_msg="evaluation")
    assert_state_matches(torch_model, keras_model, "evaluation leaves u and v")


@pytest.mark.parametrize("name", ["tcn", "sequence"])
def test_weight_normed_layers_keep_their_layout(ported, name):
    """A weight-normed conv is the conv to the layout pass (a Sequential of them runs channels-last): the traced
    graph holds no Transpose beyond the boundary's two."""
    from porter.verify.harness import count_transposes

    x = random_input(0, (2, 3, 20) if name == "tcn" else (2, 4, 9))
    assert count_transposes(ported(name).keras_model, [x]) <= 2
