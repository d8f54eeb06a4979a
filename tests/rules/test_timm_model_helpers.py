"""timm.models' helpers that model classes call (rules/timm.py, runtime/timm.py) and the module-flag `if`s and
autocast calls of timm's layers (frontend/static_branches.py, rules/autocast.py), against real timm and torch: a
model written as timm's files write it converts with exit 0 and matches torch for hypothesis-drawn batches; the
runtime helpers give timm's values. `to_2tuple` gives Python values (`[int(x * dim) for x in to_2tuple(r)]`, timm's
MixerBlock, is no tensor loop)."""

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.torchvision_support import import_torchvision
from tests.rules.op_ports import assert_same_outputs, port, random_input

import_torchvision()  # timm imports torchvision, whose compiled ops need their schemas registered first
pytest.importorskip("timm")

MODEL = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from timm.layers import _assert, to_2tuple
from timm.models._features import feature_take_indices
from timm.models._manipulate import checkpoint, checkpoint_seq, named_apply
try:
    from apex.normalization.fused_layer_norm import fused_layer_norm_affine
    has_apex = True
except ImportError:
    has_apex = False


def fast_layer_norm(x, shape, weight, bias, eps):
    if torch.jit.is_scripting():
        return F.layer_norm(x, shape, weight, bias, eps)
    if has_apex:
        return fused_layer_norm_affine(x, weight, bias, shape, eps)
    with torch.amp.autocast(device_type=x.device.type, enabled=False):
        if torch.is_autocast_enabled():
            x = x.to(torch.get_autocast_dtype(x.device.type))
        return F.layer_norm(x, shape, weight, bias, eps)


def init_weights(module, name=''):
    if isinstance(module, nn.Linear) and name.startswith('stages'):
        nn.init.constant_(module.bias, 0.25)


class Net(nn.Module):
    def __init__(self, dim=8, grad_checkpointing=True):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        hidden, out = [int(x * dim) for x in to_2tuple((1.5, 1.0))]
        self.stages = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, out))
        self.extra = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 4)
        self.grad_checkpointing = grad_checkpointing
        named_apply(init_weights, self)

    def forward(self, x):
        _assert(x.shape[-1] == 8, 'expected 8 features')
        take_indices, max_index = feature_take_indices(3, [0, -1])
        if has_apex and self.training:
            x = x * 3
        x = fast_layer_norm(x, self.norm.normalized_shape, self.norm.weight, self.norm.bias, self.norm.eps)
        if self.grad_checkpointing and not torch.jit.is_scripting():
            x = checkpoint_seq(self.stages, x)
            x = checkpoint(self.extra, x)
        else:
            x = self.stages(x)
            x = self.extra(x)
        return self.head(x) * (max_index + len(take_indices))
'''


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("timm_helpers"), textwrap.dedent(MODEL), input_specs=("5,8",))


@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_timm_helpers_model_matches_torch(net, batch, seed):
    assert_same_outputs(net, [random_input(seed, (batch, 5, 8))], tolerance=1e-5, what=f"batch {batch}")


def test_timm_helpers_model_converts_without_stubs_or_apex(net):
    text = net.keras_module.__loader__.get_source(net.keras_module.__name__)
    assert "apex" not in text.replace("has_apex", "") and "not_supported(" not in text
    assert "fused_layer_norm_affine" not in text


def test_timm_helpers_model_compiles_with_xla(net):
    assert_same_outputs(net, [random_input(1, (2, 5, 8))], tolerance=1e-5, what="under XLA", jit=True)


@pytest.mark.parametrize("num_features, indices, as_set", [(5, None, False), (5, 2, False), (4, [0, -1], False),
                                                           (4, (1, 2), True), (3, 3, False)])
def test_feature_take_indices_matches_timm(num_features, indices, as_set):
    from timm.models._features import feature_take_indices as timm_take

    from porter.runtime.timm import feature_take_indices

    assert feature_take_indices(num_features, indices, as_set) == timm_take(num_features, indices, as_set)
    with pytest.raises(AssertionError):
        feature_take_indices(3, 4)


@pytest.mark.parametrize("depth_first, include_root", [(True, False), (False, True), (True, True)])
def test_named_apply_visits_what_timm_visits(net, depth_first, include_root):
    """Same (name, kind) sequence as timm's named_apply over the torch model."""
    from timm.models._manipulate import named_apply as timm_named_apply

    from porter.runtime.timm import named_apply

    if not hasattr(net, "keras_model"):
        net.build()
    seen_torch, seen_port = [], []
    timm_named_apply(lambda module, name: seen_torch.append(name), net.torch_model, depth_first=depth_first,
                     include_root=include_root)
    named_apply(lambda module, name: seen_port.append(name), net.keras_model, depth_first=depth_first,
                include_root=include_root)
    assert seen_port == seen_torch


def test_autocast_runtime_is_inert():
    import keras
    import tensorflow as tf

    from porter.runtime.autocast import autocast, get_autocast_dtype, is_autocast_enabled

    with autocast("cuda", enabled=False):
        assert is_autocast_enabled("cpu") is False
    assert get_autocast_dtype("cuda") == tf.as_dtype(keras.config.dtype_policy().compute_dtype)


@settings(max_examples=6, deadline=None)
@given(shape=st.sampled_from([(64, 48), (32, 8, 3, 3), (96, 40)]), scale=st.sampled_from([0.5, 1.0, 2.0]),
       mode=st.sampled_from(["fan_in", "fan_out", "fan_avg"]),
       distribution=st.sampled_from(["truncated_normal", "normal", "uniform"]))
def test_timm_tf_style_initialisers_draw_timm_distribution(shape, scale, mode, distribution):
    """variance_scaling_ (lecun_normal_ its fan_in truncated case) and trunc_normal_tf_: the same law as timm's
    (compared by standard deviation and bounds over thousands of draws)."""
    import tensorflow as tf
    import torch
    from timm.layers import lecun_normal_, trunc_normal_tf_, variance_scaling_

    from porter.runtime.helpers import init_lecun_normal, init_trunc_normal_tf, init_variance_scaling

    torch.manual_seed(0)  # both sides' draws seeded: the same law compared on fixed samples, not a flaky one-in-a-
    tf.random.set_seed(0)  # hundred miss of the two sample means (CI's 2,304 draws once came out 2.9 sigma apart)
    # (timm's, the port's, whether the law is bounded: the extremes of an unbounded normal's draws are not compared)
    pairs = [(lambda t: variance_scaling_(t, scale, mode, distribution),
              lambda v: init_variance_scaling(v, scale, mode, distribution), distribution != "normal"),
             (lecun_normal_, init_lecun_normal, True),
             (lambda t: trunc_normal_tf_(t, 0.5, 2.0, -1.0, 1.5),
              lambda v: init_trunc_normal_tf(v, 0.5, 2.0, -1.0, 1.5), True)]
    for timm_init, port_init, bounded in pairs:
        expected, got = torch.empty(shape), tf.Variable(np.zeros(shape, np.float32))
        timm_init(expected)  # timm's return the tensor or None: both fill in place
        port_init(got)
        expected, got = expected.numpy(), got.numpy()
        assert abs(got.std() - expected.std()) <= 0.08 * expected.std()
        assert abs(got.mean() - expected.mean()) <= 0.08 * expected.std() + 1e-6
        if bounded:
            assert got.min() >= expected.min() - 0.2 * expected.std()
            assert got.max() <= expected.max() + 0.2 * expected.std()


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), flatten=st.booleans())
def test_checkpoint_seq_over_a_list_runs_the_functions_in_turn_as_timm(seed, flatten):
    """The runtime form (a list literal of stages, `flatten=True` over nested lists: ResNet's forward_features)."""
    import torch
    from timm.models._manipulate import checkpoint_seq as timm_checkpoint_seq

    from porter.runtime.timm import checkpoint_seq

    x = random_input(seed, (2, 3))
    scales = [1.5, -0.5, 2.0]
    torch_functions = [lambda t, s=s: torch.tanh(t * s) for s in scales]
    port_functions = [lambda a, s=s: np.tanh(a * s) for s in scales]
    if flatten:
        torch_functions, port_functions = [torch_functions[:2], torch_functions[2:]], [port_functions[:2],
                                                                                       port_functions[2:]]
    expected = timm_checkpoint_seq(torch_functions, torch.from_numpy(x), flatten=flatten).numpy()
    np.testing.assert_allclose(checkpoint_seq(port_functions, x, flatten=flatten), expected, rtol=1e-6)


@pytest.mark.parametrize("prefix", ["", "model"])
def test_named_modules_and_children_list_what_torch_lists(net, prefix):
    """The runtime's Module.named_modules() / named_children() (timm ResNet.init_weights walks named_modules): the
    same dotted names, in torch's order, as torch's over the torch model."""
    if not hasattr(net, "keras_model"):
        net.build()
    torch_names = [name for name, _ in net.torch_model.named_modules(prefix=prefix)]
    assert [name for name, _ in net.keras_model.named_modules(prefix=prefix)] == torch_names
    assert [name for name, _ in net.keras_model.named_children()] == \
        [name for name, _ in net.torch_model.named_children()]
