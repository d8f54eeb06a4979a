"""torch's loss functions as model code calls them (`loss = F.cross_entropy(logits.view(-1, V), targets.view(-1),
ignore_index=-1)` inside forward, or an `nn.CrossEntropyLoss()` attribute): torch's reductions, class axis 1,
ignore_index, class weights, label smoothing, pos_weight; computed in float32."""

import tensorflow as tf

from porter.runtime.base import TorchLayer


def _loss_reduce(values, reduction, denominator=None):
    if reduction == "none":
        return values
    if reduction == "sum":
        return tf.reduce_sum(values)
    if reduction != "mean":
        raise ValueError(f"{reduction} is not a valid value for reduction")
    total = tf.reduce_sum(values)
    return total / denominator if denominator is not None else total / tf.cast(tf.size(values), values.dtype)


def _classes_last(input):
    """(N, C, d1, ...) -> (N, d1, ..., C); (N, C) and (C,) unchanged."""
    input = tf.cast(input, tf.float32)
    rank = len(input.shape)
    if rank <= 2:
        return input
    return tf.transpose(input, [0] + list(range(2, rank)) + [1])


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
             label_smoothing=0.0, _log_softmax=False):
    """torch.nn.functional.nll_loss (and cross_entropy's class-index path): -w[y] logp[y], the mean weighted by
    w[y] over targets that are not ignore_index."""
    logp = _classes_last(input)
    if _log_softmax:
        logp = tf.nn.log_softmax(logp, axis=-1)
    classes = logp.shape[-1]
    target = tf.cast(target, tf.int32)
    keep = tf.not_equal(target, ignore_index)
    safe = tf.where(keep, target, 0)
    picked = tf.gather(logp, safe, axis=-1, batch_dims=len(safe.shape))
    weights = tf.cast(weight, tf.float32) if weight is not None else None
    item_weight = tf.where(keep, tf.gather(weights, safe) if weights is not None else tf.ones_like(picked), 0.0)
    losses = -picked * item_weight
    if label_smoothing:
        smooth = -tf.reduce_sum(logp * weights if weights is not None else logp, axis=-1)
        losses = (1.0 - label_smoothing) * losses + label_smoothing / classes * tf.where(keep, smooth, 0.0)
    return _loss_reduce(losses, reduction, tf.reduce_sum(item_weight) if reduction == "mean" else None)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """torch.nn.functional.cross_entropy with class-index targets, or class probabilities (same shape as input)."""
    target = tf.convert_to_tensor(target)
    if target.dtype.is_floating and len(target.shape) == len(input.shape):
        logp = tf.nn.log_softmax(_classes_last(input), axis=-1)
        probabilities = _classes_last(target)
        classes = logp.shape[-1]
        if label_smoothing:
            probabilities = probabilities * (1.0 - label_smoothing) + label_smoothing / classes
        scaled = logp * tf.cast(weight, tf.float32) if weight is not None else logp
        return _loss_reduce(-tf.reduce_sum(scaled * probabilities, axis=-1), reduction)
    return nll_loss(input, target, weight, ignore_index=ignore_index, reduction=reduction,
                    label_smoothing=label_smoothing, _log_softmax=True)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _loss_reduce(tf.square(tf.cast(input, tf.float32) - tf.cast(target, tf.float32)), reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _loss_reduce(tf.abs(tf.cast(input, tf.float32) - tf.cast(target, tf.float32)), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    difference = tf.abs(tf.cast(input, tf.float32) - tf.cast(target, tf.float32))
    values = difference - 0.5 * beta if beta == 0 else tf.where(difference < beta, 0.5 * difference ** 2 / beta,
                                                                 difference - 0.5 * beta)
    return _loss_reduce(values, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Stable: (1 - y) x + (1 + (p - 1) y) softplus(-x), p = pos_weight (1 without one)."""
    x, y = tf.cast(input, tf.float32), tf.cast(target, tf.float32)
    factor = 1.0 + (tf.cast(pos_weight, tf.float32) - 1.0) * y if pos_weight is not None else 1.0
    values = (1.0 - y) * x + factor * tf.nn.softplus(-x)
    if weight is not None:
        values = values * tf.cast(weight, tf.float32)
    return _loss_reduce(values, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """torch clamps each log at -100."""
    p, y = tf.cast(input, tf.float32), tf.cast(target, tf.float32)
    log_p = tf.maximum(tf.math.log(p), -100.0)
    log_q = tf.maximum(tf.math.log(1.0 - p), -100.0)
    values = -(y * log_p + (1.0 - y) * log_q)
    if weight is not None:
        values = values * tf.cast(weight, tf.float32)
    return _loss_reduce(values, reduction)


class _LossLayer(TorchLayer):
    """A torch loss module: its constructor arguments, then the function on (input, target)."""

    _loss_function = None
    _loss_params = ("reduction",)

    def __init__(self, *args, **kwargs):
        keras_kwargs = {k: kwargs.pop(k) for k in ("name", "dtype", "trainable") if k in kwargs}
        super().__init__(**keras_kwargs)
        self.loss_args = dict(zip(self._loss_params, args))
        self.loss_args.update({k: v for k, v in kwargs.items() if k not in ("size_average", "reduce")})
        self.finish_init()

    def call(self, input, target):
        return type(self)._loss_function(input, target, **self.loss_args)


class CrossEntropyLoss(_LossLayer):
    _loss_function = cross_entropy
    _loss_params = ("weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing")


class NLLLoss(_LossLayer):
    _loss_function = nll_loss
    _loss_params = ("weight", "size_average", "ignore_index", "reduce", "reduction")


class MSELoss(_LossLayer):
    _loss_function = mse_loss
    _loss_params = ("size_average", "reduce", "reduction")


class L1Loss(_LossLayer):
    _loss_function = l1_loss
    _loss_params = ("size_average", "reduce", "reduction")


class SmoothL1Loss(_LossLayer):
    _loss_function = smooth_l1_loss
    _loss_params = ("size_average", "reduce", "reduction", "beta")


class BCEWithLogitsLoss(_LossLayer):
    _loss_function = binary_cross_entropy_with_logits
    _loss_params = ("weight", "size_average", "reduce", "reduction", "pos_weight")


class BCELoss(_LossLayer):
    _loss_function = binary_cross_entropy
    _loss_params = ("weight", "size_average", "reduce", "reduction")
