"""Normalization layers and functions with torch semantics (BatchNorm, LayerNorm, GroupNorm, InstanceNorm, ...).

The math is written out with TF ops instead of using Keras' normalization layers. Statistics use a corrected
two-pass algorithm (mean, then the residual mean and mean square of the deviations) and the output is
(x - mean) * rsqrt(var + eps), so inputs with a large mean keep their precision (closer to the float64 answer than
torch's own float32 kernels). eps/momentum and the running-statistics update follow torch exactly (running_var takes
the unbiased batch variance). float16/bfloat16 inputs are normalized in float32 (as torch does on GPU) and the result
is cast back to the input's dtype. All variables are created with autocast=False and cast explicitly.

Channel axis: channels-last layers (BatchNorm*, GroupNorm, InstanceNorm*, LocalResponseNorm) take the channel axis
last; LayerNorm/RMSNorm work on torch's order ("source") and normalize the trailing dims.
"""

import numpy as np
import tensorflow as tf

from porter.runtime.base import StateEntry, TorchLayer, static_dims

# --------------------------------------------------------------------------------------------------- helpers


def _norm_compute_dtype(dtype):
    """The dtype statistics are computed in: float32 for half types, else the input's own dtype."""
    dtype = tf.as_dtype(dtype)
    return tf.float32 if dtype in (tf.float16, tf.bfloat16) else dtype


def _norm_prepare(x):
    """(x converted to a tensor in its compute dtype, the dtype to return)."""
    x = tf.convert_to_tensor(x)
    out_dtype = x.dtype
    compute = _norm_compute_dtype(out_dtype)
    return (tf.cast(x, compute) if compute != out_dtype else x), out_dtype


def _norm_cast(value, dtype):
    """A parameter/buffer (variable, tensor or array) as a tensor of `dtype`; None stays None."""
    if value is None:
        return None
    return tf.cast(tf.convert_to_tensor(value), dtype)


def _norm_moments(x, axes):
    """Mean, biased variance (both keeping dims) and x - mean over `axes`: corrected two-pass algorithm.

    The first mean carries a rounding error of about ulp(mean); for inputs with a large mean (1e3 and a unit
    spread) that error alone is ~3e-5 of the output. The residual mean of the (exactly representable) deviations
    removes it, and the same pass gives the variance: var = mean(d^2) - mean(d)^2.
    """
    mean = tf.reduce_mean(x, axis=axes, keepdims=True)
    deviation = x - mean
    residual = tf.reduce_mean(deviation, axis=axes, keepdims=True)
    var = tf.maximum(tf.reduce_mean(tf.square(deviation), axis=axes, keepdims=True) - tf.square(residual), 0)
    return mean + residual, var, deviation - residual


def _norm_count(x, axes):
    """The number of elements reduced over `axes` (a Python int when static, else a tensor), and whether static."""
    sizes = [x.shape[axis] for axis in axes]
    if all(size is not None for size in sizes):
        count = 1
        for size in sizes:
            count *= size
        return count, True
    shape = tf.shape(x)
    return tf.reduce_prod(tf.gather(shape, axes)), False


def _norm_affine(y, weight, bias):
    """y * weight + bias with weight/bias broadcast over the last axis (either may be None)."""
    if weight is not None:
        y = y * _norm_cast(weight, y.dtype)
    if bias is not None:
        y = y + _norm_cast(bias, y.dtype)
    return y


def _norm_update_running(variable, value, factor):
    """running = factor * value + (1 - factor) * running (torch's update order), in place when assignable."""
    if variable is None or not hasattr(variable, "assign"):
        return
    dtype = tf.as_dtype(variable.dtype)
    current = tf.convert_to_tensor(variable)
    factor = tf.cast(factor, dtype)
    variable.assign(factor * tf.cast(value, dtype) + (1 - factor) * current)


def _norm_batch_stats(x, axes, rm, rv, factor, update, what, biased_running_var=False):
    """Batch mean/var (keepdims) over `axes`; updates the running stats with the unbiased variance if `update`
    (the biased one with `biased_running_var`: Gluon's BatchNorm)."""
    count, static = _norm_count(x, axes)
    if static and count <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {tuple(x.shape)}"
                         f" ({what})")
    mean, var, centered = _norm_moments(x, axes)
    if update:
        n = tf.cast(count, x.dtype)
        unbiased = var if biased_running_var else var * (n / (n - 1))
        # collapse keepdims to per-channel vectors (mean over any leading instance axis: InstanceNorm)
        _norm_update_running(rm, _norm_channel_vector(mean), factor)
        _norm_update_running(rv, _norm_channel_vector(unbiased), factor)
    return mean, var, centered


def _norm_channel_vector(stat):
    """A keepdims statistic of shape (1.., C) or (N, 1.., C) -> (C,), averaging over the leading (instance) axis."""
    channels = stat.shape[-1]
    return tf.reduce_mean(tf.reshape(stat, [-1, channels]), axis=0)


def _norm_bn_fused(x, running_mean, running_var, weight, bias, eps):
    """Inference-mode batch norm of a float32 channels-last `x` as one FusedBatchNormV3 op.

    Grappler fuses an inference-mode FusedBatchNormV3 that follows a Conv2D (and a ReLU after it) into the
    convolution, so a Conv-BN-ReLU block is one kernel instead of five elementwise passes. The raw op takes `eps`
    as given (tf.nn.fused_batch_norm would raise it to 1.001e-5). Training does not use it: on CPU, oneDNN's
    training-mode gradient of the op differs from torch's by up to ~1% for small batches (a variance correction;
    exact with TF_ENABLE_ONEDNN_OPTS=0 and under XLA), so the batch statistics path below is used instead. Other
    ranks than 4 are reshaped to (N, rest, 1, C), which keeps each channel's set of values.
    """
    rank = len(x.shape)
    channels = x.shape[-1]
    dims = static_dims(x)
    flat = x if rank == 4 else tf.reshape(x, [dims[0], -1, 1, channels])
    scale = tf.ones([channels], tf.float32) if weight is None else _norm_cast(weight, tf.float32)
    offset = tf.zeros([channels], tf.float32) if bias is None else _norm_cast(bias, tf.float32)
    y = tf.raw_ops.FusedBatchNormV3(
        x=flat, scale=scale, offset=offset, mean=_norm_cast(running_mean, tf.float32),
        variance=_norm_cast(running_var, tf.float32), epsilon=eps, data_format="NHWC", is_training=False)[0]
    return y if rank == 4 else tf.reshape(y, dims)


def _norm_bn_fusable(x, running_mean, running_var, use_batch_stats):
    """Whether `_norm_bn_fused` applies: inference with running statistics, float32 (after the half-type cast),
    a static channel count, 2-5 dims."""
    return (not use_batch_stats and running_mean is not None and running_var is not None
            and x.dtype == tf.float32 and 2 <= len(x.shape) <= 5 and x.shape[-1] is not None)


def _norm_bn_forward(x, running_mean, running_var, weight, bias, use_batch_stats, factor, eps, update,
                     biased_running_var=False):
    """Batch norm on a channels-last tensor (channel axis last). Returns the output in x's dtype."""
    x, out_dtype = _norm_prepare(x)
    if _norm_bn_fusable(x, running_mean, running_var, use_batch_stats):
        return tf.cast(_norm_bn_fused(x, running_mean, running_var, weight, bias, eps), out_dtype)
    rank = len(x.shape)
    axes = list(range(rank - 1))
    if use_batch_stats or running_mean is None or running_var is None:
        mean, var, centered = _norm_batch_stats(x, axes, running_mean, running_var, factor, update, "batch_norm",
                                                biased_running_var)
    else:
        mean = _norm_cast(running_mean, x.dtype)
        var = _norm_cast(running_var, x.dtype)
        centered = x - mean
    scale = tf.math.rsqrt(var + tf.cast(eps, x.dtype))  # per channel: fold the weight in before broadcasting
    if weight is not None:
        scale = scale * _norm_cast(weight, x.dtype)
    y = centered * scale
    if bias is not None:
        y = y + _norm_cast(bias, x.dtype)
    return tf.cast(y, out_dtype)


def _norm_state(layer, prefix):
    """StateEntry list for weight, bias, running_mean, running_var (those the layer has), in torch's key order."""
    entries = []
    for name in ("weight", "bias", "running_mean", "running_var"):
        variable = getattr(layer, name, None)
        if variable is not None:
            entries.append(StateEntry(prefix + name, variable))
    return entries


def _norm_training(training):
    """The training flag as a Python bool (None: inference). A symbolic flag must have a static value."""
    if tf.is_tensor(training):
        value = tf.get_static_value(training)
        if value is None:
            raise ValueError("normalization layers need a Python (or constant) training flag")
        training = value
    return bool(training)


def _norm_rank_check(layer, x, ranks):
    rank = len(x.shape)
    if rank not in ranks:
        expected = " or ".join(f"{r}D" for r in ranks)
        raise ValueError(f"{type(layer).__name__}: expected {expected} input (got {rank}D input)")


class _NormReset:
    """torch's `reset_parameters()` / `reset_running_stats()` of its norm layers (model code calls them in its weight
    init: timm's efficientvim.py `m.reset_parameters()` for each LayerNorm and BatchNorm): weight 1, bias 0, running
    mean 0, running variance 1, batch count 0, for those the layer has."""

    def reset_running_stats(self):
        for name, fill in (("running_mean", tf.zeros_like), ("running_var", tf.ones_like),
                           ("num_batches_tracked", tf.zeros_like)):
            variable = getattr(self, name, None)
            if variable is not None:
                variable.assign(fill(variable))

    def reset_parameters(self):
        self.reset_running_stats()
        for name, fill in (("weight", tf.ones_like), ("bias", tf.zeros_like)):
            variable = getattr(self, name, None)
            if variable is not None:
                variable.assign(fill(variable))


# --------------------------------------------------------------------------------------------------- BatchNorm


class _BatchNormBase(_NormReset, TorchLayer):
    """torch's _BatchNorm: batch statistics in training (updating running stats), running stats in eval."""

    porter_layout = "channels_last"
    _norm_ranks = None  # allowed input ranks (None: any >= 2)

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True, **kwargs):
        super().__init__(**kwargs)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats, self.use_bias = affine, track_running_stats, bias
        self.make_weights(num_features)
        self.finish_init()

    def make_weights(self, num_features):
        """weight, bias and the running statistics; the Lazy batch norms call it once the input gives
        `num_features`."""
        self.num_features = num_features
        self.weight = self.bias = None
        if self.affine:
            self.weight = self.add_weight(shape=(num_features,), initializer="ones", name="weight", autocast=False)
            if self.use_bias:
                self.bias = self.add_weight(shape=(num_features,), initializer="zeros", name="bias", autocast=False)
        self.running_mean = self.running_var = self.num_batches_tracked = None
        if self.track_running_stats:
            self.running_mean = self.add_weight(shape=(num_features,), initializer="zeros", name="running_mean",
                                                trainable=False, autocast=False)
            self.running_var = self.add_weight(shape=(num_features,), initializer="ones", name="running_var",
                                               trainable=False, autocast=False)
            # torch bookkeeping; load_state_dict ignores it (see base.IGNORED_SUFFIXES), so it restarts at 0
            self.num_batches_tracked = self.add_weight(shape=(), initializer="zeros", dtype="int64",
                                                       name="num_batches_tracked", trainable=False, autocast=False)

    def call(self, x, training=None):
        x = tf.convert_to_tensor(x)
        rank = len(x.shape)
        if self._norm_ranks is not None:
            _norm_rank_check(self, x, self._norm_ranks)
        elif rank < 2:
            raise ValueError(f"{type(self).__name__}: expected at least 2D input (got {rank}D input)")
        training = _norm_training(training)
        factor = 0.0 if self.momentum is None else self.momentum
        update = training and self.track_running_stats
        if update:
            count = self.num_batches_tracked.assign_add(tf.constant(1, tf.int64))
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / tf.cast(count, tf.float64)
        use_batch_stats = training or not self.track_running_stats
        return _norm_bn_forward(x, self.running_mean, self.running_var, self.weight, self.bias, use_batch_stats,
                                factor, self.eps, update)

    def torch_state(self, prefix=""):
        return _norm_state(self, prefix)

    def get_config(self):
        return {**super().get_config(), "num_features": self.num_features, "eps": self.eps,
                "momentum": self.momentum, "affine": self.affine, "track_running_stats": self.track_running_stats,
                "bias": self.use_bias}


class FrozenBatchNorm2d(TorchLayer):
    """torchvision.ops.FrozenBatchNorm2d: a batch norm whose statistics and affine parameters are buffers (never
    trained), on channels-last images; computed as torchvision does (`x * scale + (bias - mean * scale)`)."""

    porter_layout = "channels_last"

    def __init__(self, num_features, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.num_features, self.eps = num_features, eps
        for name, initializer in (("weight", "ones"), ("bias", "zeros"), ("running_mean", "zeros"),
                                  ("running_var", "ones")):
            setattr(self, name, self.add_weight(shape=(num_features,), initializer=initializer, name=name,
                                                trainable=False, autocast=False))
        self.finish_init()

    def call(self, x):
        x, out_dtype = _norm_prepare(tf.convert_to_tensor(x))
        scale = _norm_cast(self.weight, x.dtype) * tf.math.rsqrt(_norm_cast(self.running_var, x.dtype) +
                                                                 tf.cast(self.eps, x.dtype))
        shift = _norm_cast(self.bias, x.dtype) - _norm_cast(self.running_mean, x.dtype) * scale
        return tf.cast(x * scale + shift, out_dtype)

    def torch_state(self, prefix=""):
        return _norm_state(self, prefix)

    def get_config(self):
        return {**super().get_config(), "num_features": self.num_features, "eps": self.eps}


class BatchNorm1d(_BatchNormBase):
    """torch.nn.BatchNorm1d: input (N, C) or channels-last (N, L, C)."""

    _norm_ranks = (2, 3)


class BatchNorm2d(_BatchNormBase):
    """torch.nn.BatchNorm2d: channels-last input (N, H, W, C)."""

    _norm_ranks = (4,)


class BatchNorm3d(_BatchNormBase):
    """torch.nn.BatchNorm3d: channels-last input (N, D, H, W, C)."""

    _norm_ranks = (5,)


class SyncBatchNorm(_BatchNormBase):
    """torch.nn.SyncBatchNorm on one replica: BatchNorm over any rank >= 2 (process_group is ignored)."""

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True, **kwargs):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, bias=bias, **kwargs)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-05):
    """torch.nn.functional.batch_norm on a channels-last tensor; updates assignable running stats in training."""
    x = tf.convert_to_tensor(input)
    training = _norm_training(training)
    update = training and running_mean is not None and running_var is not None
    factor = 0.0 if momentum is None else momentum
    return _norm_bn_forward(x, running_mean, running_var, weight, bias, training, factor, eps, update)


def standardized_kernel(kernel, weight=None, bias=None, eps=1e-05):
    """torch's `F.batch_norm(w.reshape(1, O, -1), None, None, weight, bias, training=True, eps=eps).reshape_as(w)` (a
    weight-standardised convolution) of a kernel held as Keras stores it, (k..., I/g, O): each output channel's
    entries standardised (mean 0, biased variance 1), then scaled and shifted per output channel; no transpose."""
    kernel, out_dtype = _norm_prepare(kernel)  # (half precision computes in float32, as batch_norm does)
    _, variance, deviation = _norm_moments(kernel, list(range(len(kernel.shape) - 1)))
    result = deviation * tf.math.rsqrt(variance + tf.cast(eps, kernel.dtype))
    if weight is not None:
        result = result * tf.reshape(_norm_cast(weight, kernel.dtype), [-1])
    if bias is not None:
        result = result + tf.reshape(_norm_cast(bias, kernel.dtype), [-1])
    return tf.cast(result, out_dtype)


# --------------------------------------------------------------------------------------------------- InstanceNorm


def _norm_instance_forward(x, running_mean, running_var, weight, bias, use_input_stats, momentum, eps, batched=True):
    """Instance norm on channels-last x: (N, *S, C) (or unbatched: channel axis 0, then spatial axes)."""
    x, out_dtype = _norm_prepare(x)
    rank = len(x.shape)
    if batched:
        axes = list(range(1, rank - 1))
    else:  # unbatched torch input (C, *S), permuted by the layout pass to (C, *S'): the reduction ignores order
        axes = list(range(1, rank))
    eps_t = tf.cast(eps, x.dtype)
    if use_input_stats or running_mean is None or running_var is None:
        update = running_mean is not None and running_var is not None
        if batched:
            mean, var, centered = _norm_batch_stats(x, axes, running_mean, running_var, momentum, update,
                                                    "instance_norm")
        else:  # stats have shape (C, 1..): move C last for the running-stat helper
            mean, var, centered = _norm_moments(x, axes)
            count, static = _norm_count(x, axes)
            if static and count <= 1:
                raise ValueError(f"Expected more than 1 spatial element when training, got {tuple(x.shape)}")
            if update:
                n = tf.cast(count, x.dtype)
                _norm_update_running(running_mean, tf.reshape(mean, [-1]), momentum)
                _norm_update_running(running_var, tf.reshape(var * (n / (n - 1)), [-1]), momentum)
        y = centered * tf.math.rsqrt(var + eps_t)
    else:
        mean, var = _norm_cast(running_mean, x.dtype), _norm_cast(running_var, x.dtype)
        if not batched:
            shape = [-1] + [1] * (rank - 1)
            mean, var = tf.reshape(mean, shape), tf.reshape(var, shape)
        y = (x - mean) * tf.math.rsqrt(var + eps_t)
    if not batched:
        shape = [-1] + [1] * (rank - 1)
        weight = None if weight is None else tf.reshape(_norm_cast(weight, y.dtype), shape)
        bias = None if bias is None else tf.reshape(_norm_cast(bias, y.dtype), shape)
    y = _norm_affine(y, weight, bias)
    return tf.cast(y, out_dtype)


class _InstanceNormBase(_NormReset, TorchLayer):
    """torch's _InstanceNorm: per-sample, per-channel statistics over the spatial axes (channels-last input)."""

    porter_layout = "channels_last"
    _norm_rank = 3  # batched input rank; one less means an unbatched input

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True, **kwargs):
        super().__init__(**kwargs)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats, self.use_bias = affine, track_running_stats, bias
        self.weight = self.bias = None
        if affine:
            self.weight = self.add_weight(shape=(num_features,), initializer="ones", name="weight", autocast=False)
            if bias:
                self.bias = self.add_weight(shape=(num_features,), initializer="zeros", name="bias", autocast=False)
        self.running_mean = self.running_var = self.num_batches_tracked = None
        if track_running_stats:
            self.running_mean = self.add_weight(shape=(num_features,), initializer="zeros", name="running_mean",
                                                trainable=False, autocast=False)
            self.running_var = self.add_weight(shape=(num_features,), initializer="ones", name="running_var",
                                               trainable=False, autocast=False)
            # present in torch's state_dict but never incremented by InstanceNorm; ignored by load_state_dict
            self.num_batches_tracked = self.add_weight(shape=(), initializer="zeros", dtype="int64",
                                                       name="num_batches_tracked", trainable=False, autocast=False)
        self.finish_init()

    def call(self, x, training=None):
        x = tf.convert_to_tensor(x)
        _norm_rank_check(self, x, (self._norm_rank - 1, self._norm_rank))
        batched = len(x.shape) == self._norm_rank
        channels = x.shape[-1] if batched else x.shape[0]
        if self.affine and channels is not None and channels != self.num_features:
            raise ValueError(f"expected input's channel size to match num_features ({self.num_features}), "
                             f"but got: {channels}.")
        training = _norm_training(training)
        use_input_stats = training or not self.track_running_stats
        momentum = 0.0 if self.momentum is None else self.momentum
        return _norm_instance_forward(x, self.running_mean, self.running_var, self.weight, self.bias,
                                      use_input_stats, momentum, self.eps, batched)

    def torch_state(self, prefix=""):
        return _norm_state(self, prefix)

    def get_config(self):
        return {**super().get_config(), "num_features": self.num_features, "eps": self.eps,
                "momentum": self.momentum, "affine": self.affine, "track_running_stats": self.track_running_stats,
                "bias": self.use_bias}


class InstanceNorm1d(_InstanceNormBase):
    """torch.nn.InstanceNorm1d: channels-last (N, L, C), or unbatched (C, L)."""

    _norm_rank = 3


class InstanceNorm2d(_InstanceNormBase):
    """torch.nn.InstanceNorm2d: channels-last (N, H, W, C), or unbatched (C, H, W) in any spatial order."""

    _norm_rank = 4


class InstanceNorm3d(_InstanceNormBase):
    """torch.nn.InstanceNorm3d: channels-last (N, D, H, W, C), or unbatched (C, D, H, W) in any spatial order."""

    _norm_rank = 5


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-05):
    """torch.nn.functional.instance_norm on a channels-last (N, *S, C) tensor; updates assignable running stats."""
    x = tf.convert_to_tensor(input)
    if len(x.shape) < 3:
        raise ValueError(f"instance_norm: expected an input with spatial dims (got shape {tuple(x.shape)})")
    return _norm_instance_forward(x, running_mean, running_var, weight, bias, bool(use_input_stats),
                                  0.0 if momentum is None else momentum, eps)


# --------------------------------------------------------------------------------------------------- LayerNorm


def _norm_shape_tuple(normalized_shape):
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(size) for size in normalized_shape)


def _norm_layer_forward(x, normalized_shape, weight, bias, eps):
    x, out_dtype = _norm_prepare(x)
    count = len(normalized_shape)
    if tuple(x.shape[len(x.shape) - count:]) != tuple(normalized_shape):
        raise ValueError(f"layer_norm: input shape {tuple(x.shape)} does not end with normalized_shape "
                         f"{tuple(normalized_shape)}")
    axes = list(range(len(x.shape) - count, len(x.shape)))
    _mean, var, centered = _norm_moments(x, axes)
    y = centered * tf.math.rsqrt(var + tf.cast(eps, x.dtype))
    if weight is not None:
        y = y * _norm_cast(weight, x.dtype)
    if bias is not None:
        y = y + _norm_cast(bias, x.dtype)
    return tf.cast(y, out_dtype)


class LayerNorm(_NormReset, TorchLayer):
    """torch.nn.LayerNorm: normalizes the trailing `normalized_shape` dims of a tensor in torch's own order."""

    porter_layout = "source"
    takes_held_order = True  # `call(x, held=...)` (runtime/module.py `call_held`)

    def __init__(self, normalized_shape, eps=1e-05, elementwise_affine=True, bias=True, device=None, dtype=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.normalized_shape = _norm_shape_tuple(normalized_shape)
        self.eps, self.elementwise_affine, self.use_bias = eps, elementwise_affine, bias
        self.weight = self.bias = None
        if elementwise_affine:
            self.weight = self.add_weight(shape=self.normalized_shape, initializer="ones", name="weight",
                                          autocast=False)
            if bias:
                self.bias = self.add_weight(shape=self.normalized_shape, initializer="zeros", name="bias",
                                            autocast=False)
        self.finish_init()

    def call(self, x, held=None):
        """`held`: the torch dims `x` stores in order (a sequence-first model's tokens held batch-first): the
        trailing dims are normalized where they lie when they are stored last in order, else in torch's order."""
        count, rank = len(self.normalized_shape), len(x.shape)
        if held is not None and list(held[rank - count:]) != list(range(rank - count, rank)):
            ordered = tf.transpose(x, [held.index(d) for d in range(rank)])
            normalized = _norm_layer_forward(ordered, self.normalized_shape, self.weight, self.bias, self.eps)
            return tf.transpose(normalized, held)
        return _norm_layer_forward(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def torch_state(self, prefix=""):
        return _norm_state(self, prefix)

    def get_config(self):
        return {**super().get_config(), "normalized_shape": list(self.normalized_shape), "eps": self.eps,
                "elementwise_affine": self.elementwise_affine, "bias": self.use_bias}


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """torch.nn.functional.layer_norm (torch's axis order)."""
    return _norm_layer_forward(input, _norm_shape_tuple(normalized_shape), weight, bias, eps)


# --------------------------------------------------------------------------------------------------- RMSNorm


def _norm_rms_forward(x, normalized_shape, weight, eps):
    x = tf.convert_to_tensor(x)
    if eps is None:  # torch: the machine epsilon of the input's dtype
        eps = _norm_finfo_eps(x.dtype)
    x, out_dtype = _norm_prepare(x)
    count = len(normalized_shape)
    if tuple(x.shape[len(x.shape) - count:]) != tuple(normalized_shape):
        raise ValueError(f"rms_norm: input shape {tuple(x.shape)} does not end with normalized_shape "
                         f"{tuple(normalized_shape)}")
    axes = list(range(len(x.shape) - count, len(x.shape)))
    mean_square = tf.reduce_mean(tf.square(x), axis=axes, keepdims=True)
    y = x * tf.math.rsqrt(mean_square + tf.cast(eps, x.dtype))
    if weight is not None:
        y = y * _norm_cast(weight, x.dtype)
    return tf.cast(y, out_dtype)


def _norm_finfo_eps(dtype):
    dtype = tf.as_dtype(dtype)
    if dtype == tf.bfloat16:
        return 0.0078125
    return float(np.finfo(dtype.as_numpy_dtype).eps)


class RMSNorm(_NormReset, TorchLayer):
    """torch.nn.RMSNorm: x * rsqrt(mean(x^2 over the trailing dims) + eps) * weight, in torch's order."""

    porter_layout = "source"

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        self.normalized_shape = _norm_shape_tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight = None
        if elementwise_affine:
            self.weight = self.add_weight(shape=self.normalized_shape, initializer="ones", name="weight",
                                          autocast=False)
        self.finish_init()

    def call(self, x):
        return _norm_rms_forward(x, self.normalized_shape, self.weight, self.eps)

    def torch_state(self, prefix=""):
        return _norm_state(self, prefix)

    def get_config(self):
        return {**super().get_config(), "normalized_shape": list(self.normalized_shape), "eps": self.eps,
                "elementwise_affine": self.elementwise_affine}


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch.nn.functional.rms_norm (torch's axis order)."""
    return _norm_rms_forward(input, _norm_shape_tuple(normalized_shape), weight, eps)


# --------------------------------------------------------------------------------------------------- GroupNorm


def _norm_group_forward(x, num_groups, weight, bias, eps):
    """Group norm on channels-last x (N, *S, C): reshape C -> (G, C/G), reduce over S and C/G (no transpose)."""
    x, out_dtype = _norm_prepare(x)
    rank = len(x.shape)
    channels = x.shape[-1]
    if rank < 2 or channels is None or channels % num_groups:
        raise ValueError(f"group_norm: {channels} channels are not divisible into {num_groups} groups")
    known = list(x.shape[:-1])
    if None not in known and int(np.prod(known, dtype=np.int64)) * (channels // num_groups) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {tuple(x.shape)}")
    dims = static_dims(x)
    grouped = tf.reshape(x, dims[:-1] + [num_groups, channels // num_groups])
    axes = list(range(1, rank - 1)) + [rank]
    _mean, var, centered = _norm_moments(grouped, axes)
    y = centered * tf.math.rsqrt(var + tf.cast(eps, x.dtype))
    y = tf.reshape(y, dims)
    y = _norm_affine(y, weight, bias)
    return tf.cast(y, out_dtype)


class GroupNorm(_NormReset, TorchLayer):
    """torch.nn.GroupNorm on a channels-last tensor (N, *S, C)."""

    porter_layout = "channels_last"

    def __init__(self, num_groups, num_channels, eps=1e-05, affine=True, device=None, dtype=None, *, bias=True,
                 **kwargs):
        super().__init__(**kwargs)
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine, self.use_bias = (
            num_groups, num_channels, eps, affine, bias)
        self.weight = self.bias = None
        if affine:
            self.weight = self.add_weight(shape=(num_channels,), initializer="ones", name="weight", autocast=False)
            if bias:
                self.bias = self.add_weight(shape=(num_channels,), initializer="zeros", name="bias", autocast=False)
        self.finish_init()

    def call(self, x):
        return _norm_group_forward(x, self.num_groups, self.weight, self.bias, self.eps)

    def torch_state(self, prefix=""):
        return _norm_state(self, prefix)

    def get_config(self):
        return {**super().get_config(), "num_groups": self.num_groups, "num_channels": self.num_channels,
                "eps": self.eps, "affine": self.affine, "bias": self.use_bias}


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """torch.nn.functional.group_norm on a channels-last tensor."""
    return _norm_group_forward(input, num_groups, weight, bias, eps)


# --------------------------------------------------------------------------------------------------- LRN


def local_response_norm(input, size, alpha=0.0001, beta=0.75, k=1.0):
    """torch.nn.functional.local_response_norm on a channels-last tensor (the window runs over the last axis)."""
    x, out_dtype = _norm_prepare(input)
    rank = len(x.shape)
    if rank < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {rank} dimensions)")
    channels = x.shape[-1]
    squared = tf.square(x)
    paddings = [[0, 0]] * (rank - 1) + [[size // 2, (size - 1) // 2]]
    padded = tf.pad(squared, paddings)
    total = padded[..., 0:channels]
    for offset in range(1, size):
        total = total + padded[..., offset:offset + channels]
    div = total / tf.cast(size, x.dtype)
    div = tf.pow(div * tf.cast(alpha, x.dtype) + tf.cast(k, x.dtype), tf.cast(beta, x.dtype))
    return tf.cast(x / div, out_dtype)


class LocalResponseNorm(TorchLayer):
    """torch.nn.LocalResponseNorm on a channels-last tensor."""

    porter_layout = "channels_last"

    def __init__(self, size, alpha=0.0001, beta=0.75, k=1.0, **kwargs):
        super().__init__(**kwargs)
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k
        self.finish_init()

    def call(self, x):
        return local_response_norm(x, self.size, self.alpha, self.beta, self.k)

    def get_config(self):
        return {**super().get_config(), "size": self.size, "alpha": self.alpha, "beta": self.beta, "k": self.k}


# --------------------------------------------------------------------------------------------------- normalize


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """torch.nn.functional.normalize: x / max(||x||_p over dim, eps). `dim` is already remapped to x's layout."""
    x, out_dtype = _norm_prepare(input)
    axis = list(dim) if isinstance(dim, (list, tuple)) else dim
    magnitude = tf.abs(x)
    if p == 2:
        norm = tf.sqrt(tf.reduce_sum(tf.square(x), axis=axis, keepdims=True))
    elif p == 1:
        norm = tf.reduce_sum(magnitude, axis=axis, keepdims=True)
    elif p == float("inf"):
        norm = tf.reduce_max(magnitude, axis=axis, keepdims=True)
    elif p == float("-inf"):
        norm = tf.reduce_min(magnitude, axis=axis, keepdims=True)
    elif p == 0:
        norm = tf.reduce_sum(tf.cast(tf.not_equal(x, 0), x.dtype), axis=axis, keepdims=True)
    else:
        power = tf.cast(p, x.dtype)
        norm = tf.pow(tf.reduce_sum(tf.pow(magnitude, power), axis=axis, keepdims=True), 1 / power)
    return tf.cast(x / tf.maximum(norm, tf.cast(eps, x.dtype)), out_dtype)
