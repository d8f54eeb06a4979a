"""Numeric tests of porter.runtime.norm against real torch normalization modules and functions."""

import keras
import numpy as np
import pytest
import tensorflow as tf
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from porter.runtime.base import load_state_dict, to_channels_first, to_channels_last
from porter.runtime.norm import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    FrozenBatchNorm2d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LayerNorm,
    LocalResponseNorm,
    RMSNorm,
    SyncBatchNorm,
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)
from porter.verify.compare import assert_equivalent, relative_error
from porter.verify.torch_bridge import copy_torch_weights, perturb_torch_module, torch_state_numpy

BATCH_NORMS = {1: (torch.nn.BatchNorm1d, BatchNorm1d), 2: (torch.nn.BatchNorm2d, BatchNorm2d),
               3: (torch.nn.BatchNorm3d, BatchNorm3d)}
INSTANCE_NORMS = {1: (torch.nn.InstanceNorm1d, InstanceNorm1d), 2: (torch.nn.InstanceNorm2d, InstanceNorm2d),
                  3: (torch.nn.InstanceNorm3d, InstanceNorm3d)}

eps_values = st.sampled_from([1e-5, 1e-3, 0.1])
momentum_values = st.sampled_from([0.1, 0.3, None])


def _inputs(seed, shape, mean=0.0, scale=1.0):
    rng = np.random.default_rng(seed)
    return (mean + scale * rng.standard_normal(shape)).astype(np.float32)


def _cl(layer, x, **kwargs):
    """Run a channels-last layer/function on a torch-layout array; return the torch-layout result as numpy."""
    return np.asarray(to_channels_first(layer(to_channels_last(x), **kwargs)))


def _torch(module, x):
    return module(torch.from_numpy(x)).detach().numpy()


def _f64_reference(module, x):
    """The torch module evaluated in float64 on the same (float32) input: the exact answer to ~1e-15."""
    import copy

    return copy.deepcopy(module).double()(torch.from_numpy(x).double()).detach().numpy()


def _assert_large_mean(reference, x, actual):
    """Against torch: float32 to the usual bar (widened by torch's own float32 error, which for means of 1e3 over
    few elements reaches ~1e-4: it rounds x*rstd - mean*rstd), and float64 to 2e-6 (the port's two-pass moments)."""
    exact = _f64_reference(reference, x)
    expected = _torch(reference, x)
    assert_equivalent(expected, actual, 1e-4 + relative_error(exact, expected))
    assert_equivalent(exact, actual, 2e-6, what="vs float64")


def _assert_running_stats(reference, ported):
    for name in ("running_mean", "running_var"):
        assert_equivalent(getattr(reference, name).numpy(), np.asarray(getattr(ported, name)), 1e-5, what=name)


def _spatial(dims, sizes):
    return tuple(sizes[:dims])


# ----------------------------------------------------------------------------------------------- BatchNorm


@given(dims=st.sampled_from([0, 1, 2, 3]), batch=st.integers(1, 3), channels=st.integers(1, 6),
       sizes=st.lists(st.integers(1, 5), min_size=3, max_size=3), eps=eps_values, momentum=momentum_values,
       affine=st.booleans(), bias=st.booleans(), track=st.booleans(), seed=st.integers(0, 2**16))
def test_batchnorm_matches_torch_train_and_eval(dims, batch, channels, sizes, eps, momentum, affine, bias, track,
                                                seed):
    """dims 0 is BatchNorm1d on (N, C); two training steps (outputs and running stats), then eval."""
    torch_cls, keras_cls = BATCH_NORMS[max(dims, 1)]
    kwargs = {"eps": eps, "momentum": momentum, "affine": affine, "track_running_stats": track, "bias": bias}
    reference = perturb_torch_module(torch_cls(channels, **kwargs), seed)
    ported = copy_torch_weights(reference, keras_cls(channels, **kwargs))
    shape = (batch, channels, *_spatial(dims, sizes))
    per_channel = int(np.prod(shape)) // channels

    reference.eval()  # eval first: running statistics (or batch statistics when not tracked)
    x = _inputs(seed, shape, mean=1.5, scale=2.0)
    if track or per_channel > 1:
        assert_equivalent(_torch(reference, x), _cl(ported, x))
    reference.train()
    if per_channel <= 1:  # torch refuses to train on one value per channel; so does the port (statically)
        with pytest.raises(ValueError):
            _torch(reference, x)
        with pytest.raises(ValueError):
            ported(to_channels_last(x), training=True)
        return
    for step in range(2):
        x = _inputs(seed + step, shape, mean=-1.0 + step, scale=1.5)
        assert_equivalent(_torch(reference, x), _cl(ported, x, training=True), what=f"training step {step}")
        if track:
            _assert_running_stats(reference, ported)
            assert int(ported.num_batches_tracked.numpy()) == int(reference.num_batches_tracked)
    reference.eval()
    x = _inputs(seed + 7, shape)
    assert_equivalent(_torch(reference, x), _cl(ported, x), what="eval after training")


@given(dims=st.sampled_from([0, 1, 2]), batch=st.integers(1, 3), channels=st.integers(1, 5), eps=eps_values,
       momentum=st.sampled_from([0.1, 0.5]), training=st.booleans(), weights=st.booleans(),
       seed=st.integers(0, 2**16))
def test_functional_batch_norm_matches_torch(dims, batch, channels, eps, momentum, training, weights, seed):
    shape = (batch, channels, *(3, 2)[:dims])
    x = _inputs(seed, shape, mean=0.5, scale=2.0)
    rng = np.random.default_rng(seed + 1)
    mean, var = rng.uniform(-0.5, 0.5, channels).astype(np.float32), rng.uniform(0.5, 1.5, channels).astype(np.float32)
    weight = rng.uniform(0.5, 1.5, channels).astype(np.float32) if weights else None
    bias = rng.uniform(-0.5, 0.5, channels).astype(np.float32) if weights else None
    if training and batch * int(np.prod(shape[2:])) <= 1:
        return
    torch_mean, torch_var = torch.from_numpy(mean.copy()), torch.from_numpy(var.copy())
    as_torch = (lambda a: None if a is None else torch.from_numpy(a))
    expected = F.batch_norm(torch.from_numpy(x), torch_mean, torch_var, as_torch(weight), as_torch(bias), training,
                            momentum, eps).numpy()
    keras_mean, keras_var = tf.Variable(mean), tf.Variable(var)
    actual = _cl(lambda t: batch_norm(t, keras_mean, keras_var, weight, bias, training, momentum, eps), x)
    assert_equivalent(expected, actual)
    assert_equivalent(torch_mean.numpy(), keras_mean.numpy(), 1e-5, what="running_mean")
    assert_equivalent(torch_var.numpy(), keras_var.numpy(), 1e-5, what="running_var")


@given(batch=st.integers(1, 3), channels=st.integers(1, 5), height=st.integers(1, 6), width=st.integers(1, 6),
       eps=eps_values, seed=st.integers(0, 2**16))
def test_frozen_batchnorm_matches_torchvision(batch, channels, height, width, eps, seed):
    """torchvision.ops.FrozenBatchNorm2d (every statistic and affine value a buffer, drawn off its default): eagerly
    and under XLA, with torchvision's state_dict keys, none of them trainable."""
    from tests.corpus.torchvision_support import import_torchvision

    import_torchvision()
    from torchvision.ops import FrozenBatchNorm2d as TorchFrozen

    reference = TorchFrozen(channels, eps=eps)
    rng = np.random.default_rng(seed)
    state = {"weight": rng.standard_normal(channels), "bias": rng.standard_normal(channels),
             "running_mean": rng.standard_normal(channels), "running_var": rng.uniform(0.1, 2.0, channels)}
    reference.load_state_dict({k: torch.tensor(v, dtype=torch.float32) for k, v in state.items()})
    ported = FrozenBatchNorm2d(channels, eps=eps)
    load_state_dict(ported, torch_state_numpy(reference))
    x = _inputs(seed, (batch, channels, height, width))
    expected = _torch(reference, x)
    assert_equivalent(expected, _cl(ported, x))
    compiled = tf.function(lambda t: ported(t), jit_compile=True)
    assert_equivalent(expected, np.asarray(to_channels_first(compiled(to_channels_last(x)))))
    assert [e.key for e in ported.torch_state()] == list(reference.state_dict())
    assert not ported.trainable_weights


def test_batchnorm_momentum_none_cumulative_average_and_state_keys():
    reference = perturb_torch_module(torch.nn.BatchNorm2d(3, momentum=None), 3)
    ported = copy_torch_weights(reference, BatchNorm2d(3, momentum=None))
    # num_batches_tracked is in torch's state_dict but not a porter state entry; load_state_dict skips it
    assert {e.key for e in ported.torch_state()} == set(reference.state_dict()) - {"num_batches_tracked"}
    reference.train()
    for step in range(4):
        x = _inputs(step, (2, 3, 3, 4), mean=step, scale=1 + step)
        assert_equivalent(_torch(reference, x), _cl(ported, x, training=True))
    _assert_running_stats(reference, ported)
    assert int(ported.num_batches_tracked.numpy()) == 4
    no_stats = BatchNorm1d(4, affine=False, track_running_stats=False)
    assert no_stats.torch_state() == [] and not no_stats.weights


def test_batchnorm_jit_compile_training_and_eval_with_unknown_batch():
    reference = perturb_torch_module(torch.nn.BatchNorm2d(4, momentum=0.2), 5)
    ported = copy_torch_weights(reference, BatchNorm2d(4, momentum=0.2))
    spec = [tf.TensorSpec([None, 5, 3, 4], tf.float32)]
    train_step = tf.function(lambda t: ported(t, training=True), input_signature=spec, jit_compile=True)
    infer = tf.function(lambda t: ported(t), input_signature=spec, jit_compile=True)
    reference.train()
    for step, batch in enumerate((2, 1, 3)):
        x = _inputs(step, (batch, 4, 5, 3), mean=2.0, scale=3.0)
        assert_equivalent(_torch(reference, x), _cl(train_step, x), what=f"xla training step {step}")
        _assert_running_stats(reference, ported)
    reference.eval()
    x = _inputs(9, (2, 4, 5, 3))
    assert_equivalent(_torch(reference, x), _cl(infer, x), what="xla eval")


@given(dims=st.sampled_from([0, 1, 3]), training=st.booleans(), seed=st.integers(0, 2**16))
def test_sync_batchnorm_is_batchnorm(dims, training, seed):
    """SyncBatchNorm on one replica: checked against torch's BatchNorm (torch's SyncBatchNorm trains only on GPU)."""
    reference = perturb_torch_module(BATCH_NORMS[max(dims, 1)][0](3, momentum=0.3), seed)
    ported = copy_torch_weights(reference, SyncBatchNorm(3, momentum=0.3, process_group=None))
    x = _inputs(seed, (2, 3, *(4, 3, 2)[:dims]), mean=1.0)
    reference.train(training)
    assert_equivalent(_torch(reference, x), _cl(ported, x, training=training))
    _assert_running_stats(reference, ported)
    sync = perturb_torch_module(torch.nn.SyncBatchNorm(3), seed).eval()
    assert_equivalent(_torch(sync, x), _cl(copy_torch_weights(sync, SyncBatchNorm(3)), x), what="SyncBatchNorm eval")


def test_batchnorm_rejects_wrong_rank():
    with pytest.raises(ValueError):
        BatchNorm2d(3)(np.zeros((2, 4, 3), np.float32))


@given(dims=st.sampled_from([0, 1, 2, 3]), mean=st.sampled_from([1e3, -1e4]), seed=st.integers(0, 2**16))
def test_batchnorm_training_with_a_large_mean_stays_close_to_float64(dims, mean, seed):
    """Batch statistics of inputs far from zero: the port to 2e-6 of the float64 answer (torch float32 drifts)."""
    reference = perturb_torch_module(BATCH_NORMS[max(dims, 1)][0](3), seed).train()
    ported = copy_torch_weights(reference, BATCH_NORMS[max(dims, 1)][1](3))
    x = _inputs(seed, (4, 3, *(5, 4, 3)[:dims]), mean=mean)
    _assert_large_mean(reference, x, _cl(ported, x, training=True))
    _assert_running_stats(reference, ported)


@pytest.mark.parametrize("training", [False, True])
def test_batchnorm_in_inference_is_one_fused_op_in_a_graph(training):
    """Inference: one FusedBatchNormV3 per call (grappler folds it into a preceding Conv2D), no elementwise chain.
    Training: the batch statistics path, not the fused op (whose oneDNN gradient is off on CPU, see below)."""
    layer = BatchNorm2d(4)
    graph = tf.function(lambda t: layer(t, training=training)).get_concrete_function(
        tf.TensorSpec([2, 5, 3, 4], tf.float32)).graph
    kinds = [op.type for op in graph.get_operations()]
    assert kinds.count("FusedBatchNormV3") == (0 if training else 1)
    if not training:
        assert "Rsqrt" not in kinds and "Mean" not in kinds


@given(batch=st.integers(2, 3), size=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_batchnorm_training_gradients_match_torch_for_small_batches(batch, size, seed):
    """Few values per channel (where a Bessel-corrected variance in the backward pass shows: oneDNN's fused
    training gradient was off by ~1% at 112 values): gradients of input, weight and bias as torch's."""
    reference = perturb_torch_module(torch.nn.BatchNorm2d(3), seed).train()
    ported = copy_torch_weights(reference, BatchNorm2d(3))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 3, size, size + 1)).astype(np.float32)
    cotangent = rng.standard_normal(x.shape).astype(np.float32)
    tx = torch.from_numpy(x).requires_grad_()
    (reference(tx) * torch.from_numpy(cotangent)).sum().backward()
    expected = [tx.grad.numpy(), reference.weight.grad.numpy(), reference.bias.grad.numpy()]
    kx = tf.Variable(to_channels_last(x))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(ported(kx, training=True) * to_channels_last(cotangent))
    grads = tape.gradient(loss, [kx, ported.weight, ported.bias])
    actual = [np.asarray(to_channels_first(grads[0])), np.asarray(grads[1]), np.asarray(grads[2])]
    for name, want, got in zip(("input", "weight", "bias"), expected, actual, strict=True):
        assert_equivalent(want, got, tolerance=1e-4, what=f"{name} gradient")


# ----------------------------------------------------------------------------------------------- LayerNorm / RMSNorm


@given(lead=st.lists(st.integers(1, 4), min_size=1, max_size=2), trailing=st.lists(st.integers(1, 7), min_size=1,
       max_size=3), as_int=st.booleans(), eps=eps_values, affine=st.booleans(), bias=st.booleans(),
       mean=st.sampled_from([0.0, 1e3, -1e3]), seed=st.integers(0, 2**16))
def test_layernorm_matches_torch(lead, trailing, as_int, eps, affine, bias, mean, seed):
    normalized = trailing[-1] if as_int else tuple(trailing)
    kwargs = {"eps": eps, "elementwise_affine": affine, "bias": bias}
    reference = perturb_torch_module(torch.nn.LayerNorm(normalized, **kwargs), seed)
    ported = copy_torch_weights(reference, LayerNorm(normalized, **kwargs))
    x = _inputs(seed, (*lead, *trailing), mean=mean)
    _assert_large_mean(reference, x, np.asarray(ported(x)))
    weight = None if ported.weight is None else ported.weight
    functional = layer_norm(x, list(np.atleast_1d(normalized)), weight, ported.bias, eps)
    assert_equivalent(_torch(reference, x), np.asarray(functional), 1e-4 + relative_error(
        _f64_reference(reference, x), _torch(reference, x)), what="F.layer_norm")


@given(lead=st.lists(st.integers(1, 4), min_size=1, max_size=2), trailing=st.lists(st.integers(1, 6), min_size=1,
       max_size=2), eps=st.sampled_from([None, 1e-6, 1e-2]), affine=st.booleans(), seed=st.integers(0, 2**16))
def test_rmsnorm_matches_torch(lead, trailing, eps, affine, seed):
    reference = perturb_torch_module(torch.nn.RMSNorm(tuple(trailing), eps=eps, elementwise_affine=affine), seed)
    ported = copy_torch_weights(reference, RMSNorm(tuple(trailing), eps=eps, elementwise_affine=affine))
    x = _inputs(seed, (*lead, *trailing), mean=0.3, scale=0.1 if eps is None else 1.0)
    assert_equivalent(_torch(reference, x), np.asarray(ported(x)))
    expected = F.rms_norm(torch.from_numpy(x), trailing, reference.weight, eps).detach().numpy()
    assert_equivalent(expected, np.asarray(rms_norm(x, trailing, ported.weight, eps)))


# ----------------------------------------------------------------------------------------------- GroupNorm


@given(dims=st.integers(0, 3), batch=st.integers(1, 3), groups=st.integers(1, 4), per_group=st.integers(1, 3),
       sizes=st.lists(st.integers(1, 5), min_size=3, max_size=3), eps=eps_values, affine=st.booleans(),
       bias=st.booleans(), mean=st.sampled_from([0.0, 1e3]), seed=st.integers(0, 2**16))
def test_groupnorm_matches_torch(dims, batch, groups, per_group, sizes, eps, affine, bias, mean, seed):
    channels = groups * per_group
    shape = (batch, channels, *_spatial(dims, sizes))
    kwargs = {"eps": eps, "affine": affine, "bias": bias}
    reference = perturb_torch_module(torch.nn.GroupNorm(groups, channels, **kwargs), seed)
    ported = copy_torch_weights(reference, GroupNorm(groups, channels, **kwargs))
    x = _inputs(seed, shape, mean=mean)
    if batch * per_group * int(np.prod(shape[2:])) == 1:  # torch's (odd) check: N * C/G * prod(S) values
        with pytest.raises(ValueError):
            _torch(reference, x)
        with pytest.raises(ValueError):
            ported(to_channels_last(x))
        return
    _assert_large_mean(reference, x, _cl(ported, x))
    functional = _cl(lambda t: group_norm(t, groups, ported.weight, ported.bias, eps), x)
    assert_equivalent(_f64_reference(reference, x), functional, 2e-6, what="F.group_norm vs float64")


# ----------------------------------------------------------------------------------------------- InstanceNorm


@given(dims=st.sampled_from([1, 2, 3]), batch=st.integers(0, 3), channels=st.integers(1, 5),
       sizes=st.lists(st.integers(2, 5), min_size=3, max_size=3), eps=eps_values, momentum=momentum_values,
       affine=st.booleans(), track=st.booleans(), seed=st.integers(0, 2**16))
def test_instancenorm_matches_torch_train_and_eval(dims, batch, channels, sizes, eps, momentum, affine, track, seed):
    """batch 0 means an unbatched (C, *S) input."""
    torch_cls, keras_cls = INSTANCE_NORMS[dims]
    kwargs = {"eps": eps, "momentum": momentum, "affine": affine, "track_running_stats": track}
    reference = perturb_torch_module(torch_cls(channels, **kwargs), seed)
    ported = copy_torch_weights(reference, keras_cls(channels, **kwargs))
    shape = ((batch,) if batch else ()) + (channels, *_spatial(dims, sizes))
    for step, training in enumerate((True, True, False)):
        reference.train(training)
        x = _inputs(seed + step, shape, mean=2.0 * step - 1, scale=1.0 + step)
        assert_equivalent(_torch(reference, x), _cl(ported, x, training=training), what=f"step {step}")
        if track:
            _assert_running_stats(reference, ported)


@given(dims=st.sampled_from([1, 2]), use_input_stats=st.booleans(), weights=st.booleans(),
       seed=st.integers(0, 2**16))
def test_functional_instance_norm_matches_torch(dims, use_input_stats, weights, seed):
    channels = 3
    x = _inputs(seed, (2, channels, *(4, 3)[:dims]), mean=1e3)
    rng = np.random.default_rng(seed)
    mean, var = rng.uniform(-0.5, 0.5, channels).astype(np.float32), rng.uniform(0.5, 1.5, channels).astype(np.float32)
    weight = rng.uniform(0.5, 1.5, channels).astype(np.float32) if weights else None
    bias = rng.uniform(-0.5, 0.5, channels).astype(np.float32) if weights else None
    torch_mean, torch_var = torch.from_numpy(mean.copy()), torch.from_numpy(var.copy())
    as_torch = (lambda a: None if a is None else torch.from_numpy(a))
    expected = F.instance_norm(torch.from_numpy(x), torch_mean, torch_var, as_torch(weight), as_torch(bias),
                               use_input_stats, 0.2, 1e-4).numpy()
    as_double = (lambda a: None if a is None else torch.from_numpy(a).double())
    exact = F.instance_norm(as_double(x), as_double(mean), as_double(var), as_double(weight), as_double(bias),
                            use_input_stats, 0.2, 1e-4).numpy()
    keras_mean, keras_var = tf.Variable(mean), tf.Variable(var)
    actual = _cl(lambda t: instance_norm(t, keras_mean, keras_var, weight, bias, use_input_stats, 0.2, 1e-4), x)
    assert_equivalent(expected, actual, 1e-4 + relative_error(exact, expected))  # torch float32 drifts at 1e3
    assert_equivalent(exact, actual, 2e-6, what="vs float64")
    assert_equivalent(torch_mean.numpy(), keras_mean.numpy(), 1e-5, what="running_mean")
    assert_equivalent(torch_var.numpy(), keras_var.numpy(), 1e-5, what="running_var")


def test_instancenorm_jit_compile():
    reference = perturb_torch_module(torch.nn.InstanceNorm2d(3, affine=True, track_running_stats=True), 2)
    ported = copy_torch_weights(reference, InstanceNorm2d(3, affine=True, track_running_stats=True))
    assert {e.key for e in ported.torch_state()} == set(reference.state_dict()) - {"num_batches_tracked"}
    spec = [tf.TensorSpec([None, 4, 5, 3], tf.float32)]
    train_step = tf.function(lambda t: ported(t, training=True), input_signature=spec, jit_compile=True)
    infer = tf.function(lambda t: ported(t), input_signature=spec, jit_compile=True)
    x = _inputs(0, (2, 3, 4, 5), mean=3.0)
    assert_equivalent(_torch(reference.train(), x), _cl(train_step, x))
    _assert_running_stats(reference, ported)
    assert_equivalent(_torch(reference.eval(), x), _cl(infer, x))


# ----------------------------------------------------------------------------------------------- LRN / normalize


@given(dims=st.integers(1, 3), batch=st.integers(1, 2), channels=st.integers(1, 7), size=st.integers(1, 6),
       alpha=st.sampled_from([1e-4, 0.1, 1.0]), beta=st.sampled_from([0.75, 0.5, 1.3]),
       k=st.sampled_from([1.0, 2.0, 0.5]), seed=st.integers(0, 2**16))
def test_local_response_norm_matches_torch(dims, batch, channels, size, alpha, beta, k, seed):
    x = _inputs(seed, (batch, channels, *(3, 2, 3)[:dims]), scale=2.0)
    reference = torch.nn.LocalResponseNorm(size, alpha, beta, k)
    assert_equivalent(_torch(reference, x), _cl(LocalResponseNorm(size, alpha, beta, k), x))
    assert_equivalent(F.local_response_norm(torch.from_numpy(x), size, alpha, beta, k).numpy(),
                      _cl(lambda t: local_response_norm(t, size, alpha, beta, k), x))


@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4), p=st.sampled_from([2.0, 1, 3, 0.5, float("inf"),
       float("-inf"), 0]), dim_seed=st.integers(0, 100), eps=st.sampled_from([1e-12, 0.5]),
       zeros=st.booleans(), seed=st.integers(0, 2**16))
def test_normalize_matches_torch(shape, p, dim_seed, eps, zeros, seed):
    x = _inputs(seed, shape)
    if zeros:  # whole zero slices exercise the eps clamp
        x[..., 0] = 0.0
    rank = len(shape)
    dim = dim_seed % (2 * rank) - rank  # negative and positive dims
    expected = F.normalize(torch.from_numpy(x), p, dim, eps).numpy()
    assert_equivalent(expected, np.asarray(normalize(x, p, dim, eps)))
    if rank >= 3:  # "any" layout: the translator hands a channels-last tensor with dim already remapped
        position = dim % rank
        remapped = rank - 1 if position == 1 else (position - 1 if position > 1 else 0)
        assert_equivalent(expected, np.asarray(to_channels_first(normalize(to_channels_last(x), p, remapped, eps))))


# ----------------------------------------------------------------------------------------------- integration


def test_jit_compile_layernorm_groupnorm_lrn_normalize():
    x = _inputs(1, (2, 6, 5, 3), mean=1e3)
    ln = perturb_torch_module(torch.nn.LayerNorm((5, 3)), 1)
    gn = perturb_torch_module(torch.nn.GroupNorm(3, 6), 2)
    rms = perturb_torch_module(torch.nn.RMSNorm(3), 3)
    port_ln, port_gn = copy_torch_weights(ln, LayerNorm((5, 3))), copy_torch_weights(gn, GroupNorm(3, 6))
    port_rms, port_lrn = copy_torch_weights(rms, RMSNorm(3)), LocalResponseNorm(3, 0.1, 0.75, 2.0)
    spec = [tf.TensorSpec([None, 6, 5, 3], tf.float32)]
    cl_spec = [tf.TensorSpec([None, 5, 3, 6], tf.float32)]
    _assert_large_mean(ln, x, tf.function(port_ln, input_signature=spec, jit_compile=True)(x).numpy())
    assert_equivalent(_torch(rms, x), tf.function(port_rms, input_signature=spec, jit_compile=True)(x).numpy())
    _assert_large_mean(gn, x, _cl(tf.function(port_gn, input_signature=cl_spec, jit_compile=True), x))
    for layer, layer_spec in ((port_ln, spec), (port_gn, cl_spec), (port_lrn, cl_spec)):  # reshapes, no transposes
        graph = tf.function(layer).get_concrete_function(*layer_spec).graph
        assert not [op for op in graph.get_operations() if op.type == "Transpose"]
    y = x - 1e3
    assert_equivalent(_torch(torch.nn.LocalResponseNorm(3, 0.1, 0.75, 2.0), y),
                      _cl(tf.function(port_lrn, input_signature=cl_spec, jit_compile=True), y))
    fn = tf.function(lambda t: normalize(t, 2.0, -1), input_signature=cl_spec, jit_compile=True)
    assert_equivalent(F.normalize(torch.from_numpy(y), dim=1).numpy(), _cl(fn, y))


def test_keras_fit_updates_running_stats_like_torch():
    """model.fit (jit-compiled train step, unknown batch and length) updates BatchNorm1d's stats as torch's forward."""
    reference = perturb_torch_module(torch.nn.BatchNorm1d(3, momentum=0.2), 1).train()
    ported = copy_torch_weights(reference, BatchNorm1d(3, momentum=0.2))
    inputs = keras.Input((None, 3))
    model = keras.Model(inputs, ported(inputs))
    model.compile(optimizer="sgd", loss="mse", jit_compile=True)
    x = _inputs(0, (4, 3, 5), mean=2.0)
    x_last = np.ascontiguousarray(x.transpose(0, 2, 1))
    model.fit(x_last, np.zeros_like(x_last), batch_size=4, epochs=1, verbose=0)
    _torch(reference, x)
    _assert_running_stats(reference, ported)
    assert int(ported.num_batches_tracked.numpy()) == 1
    graph = tf.function(lambda t: ported(t, training=True)).get_concrete_function(
        tf.TensorSpec([None, None, 3])).graph
    assert not [op for op in graph.get_operations() if op.type == "Transpose"]


def test_keras_functional_model_and_state_dict_loading():
    """A symbolic Keras model with unknown batch; a torch state_dict (incl. num_batches_tracked) loads by key."""
    torch_model = torch.nn.Sequential(torch.nn.BatchNorm2d(4), torch.nn.GroupNorm(2, 4), torch.nn.InstanceNorm2d(4,
                                      affine=True, track_running_stats=True))
    perturb_torch_module(torch_model, 4).eval()
    layers = [BatchNorm2d(4), GroupNorm(2, 4), InstanceNorm2d(4, affine=True, track_running_stats=True)]

    class Holder(keras.layers.Layer):
        def torch_state(self, prefix=""):
            return [entry for i, layer in enumerate(layers) for entry in layer.torch_state(f"{prefix}{i}.")]

    state = torch_state_numpy(torch_model)
    assert "0.num_batches_tracked" in state
    load_state_dict(Holder(), state)
    inputs = keras.Input((5, 6, 4))
    outputs = inputs
    for layer in layers:
        outputs = layer(outputs)
    model = keras.Model(inputs, outputs)
    x = _inputs(0, (3, 4, 5, 6), mean=2.0)
    assert_equivalent(_torch(torch_model, x), _cl(model, x))
    for layer in layers:  # get_config round trip
        clone = type(layer).from_config(layer.get_config())
        assert [tuple(w.shape) for w in clone.weights] == [tuple(w.shape) for w in layer.weights]


@pytest.mark.parametrize("policy", ["float16", "mixed_float16", "mixed_bfloat16"])
def test_half_precision_inputs(policy):
    """Half inputs: statistics in float32, output in the compute dtype, close to torch's float32 result."""
    x = _inputs(2, (2, 4, 5, 3), mean=3.0, scale=2.0)
    bn = perturb_torch_module(torch.nn.BatchNorm2d(4), 1).train()
    ln = perturb_torch_module(torch.nn.LayerNorm(3), 2)
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(policy if policy != "float16" else "float32")
    try:
        port_bn, port_ln = copy_torch_weights(bn, BatchNorm2d(4)), copy_torch_weights(ln, LayerNorm(3))
    finally:
        keras.config.set_dtype_policy(previous)
    if policy == "float16":  # a float32 Keras layer would cast a float16 input up: use the functional forms
        feed = to_channels_last(x.astype(np.float16))
        y_bn = batch_norm(feed, port_bn.running_mean, port_bn.running_var, port_bn.weight, port_bn.bias, True)
        y_ln = layer_norm(x.astype(np.float16), (3,), port_ln.weight, port_ln.bias)
    else:
        y_bn = port_bn(to_channels_last(x), training=True)
        y_ln = port_ln(x)
    compute = "bfloat16" if "bfloat16" in policy else "float16"
    assert y_bn.dtype == compute and y_ln.dtype == compute
    tolerance = 3e-2 if compute == "bfloat16" else 4e-3
    assert relative_error(_torch(bn, x), np.asarray(to_channels_first(tf.cast(y_bn, tf.float32)))) < tolerance
    assert relative_error(_torch(ln, x), np.asarray(tf.cast(y_ln, tf.float32))) < tolerance
    for name in ("running_mean", "running_var"):  # stats of the half input, kept in float32
        assert getattr(port_bn, name).dtype == "float32"
        assert relative_error(getattr(bn, name).numpy(), np.asarray(getattr(port_bn, name))) < tolerance
