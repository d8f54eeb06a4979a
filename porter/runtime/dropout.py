"""torch.nn Dropout family and the functional forms, with keras.random + SeedGenerator (stateless, XLA-compilable).

Inference (training None/False) and p == 0 return the input itself. In training an element (or, for the
channel-wise forms, a whole channel) is kept with probability 1 - p and scaled by 1 / (1 - p), as torch does.
Channel-wise forms (Dropout1d/2d/3d, FeatureAlphaDropout) are layout "channels_last": the noise has shape
(N, 1, ..., 1, C) on a channels-last tensor. `training` may be a Python bool, None, or a scalar bool tensor.
"""

import math

import keras
import tensorflow as tf

from porter.runtime.base import TorchLayer

_DROPOUT_SEEDS = {}
_DROPOUT_ALPHA = 1.7580993408473766  # torch's alpha' = SELU scale * alpha


def _dropout_seed():
    """The process-wide SeedGenerator of the functional forms, created eagerly (outside any tf.function)."""
    generator = _DROPOUT_SEEDS.get("generator")
    if generator is None:
        with tf.init_scope():
            generator = keras.random.SeedGenerator(name="porter_functional_dropout_seed")
        _DROPOUT_SEEDS["generator"] = generator
    return generator


def _dropout_is_training(training):
    """Python truth of a training flag that is not a tensor (None means inference)."""
    return training is not None and bool(training)


def _dropout_select(training, train_fn, infer_fn):
    """train_fn() when training, else infer_fn(); a tensor flag becomes a tf.cond."""
    if isinstance(training, (tf.Tensor, tf.Variable)):
        return tf.cond(tf.cast(training, tf.bool), train_fn, infer_fn)
    return train_fn() if _dropout_is_training(training) else infer_fn()


def _dropout_check_p(p):
    if isinstance(p, (int, float)) and not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_tensor(input):
    return input if isinstance(input, (tf.Tensor, tf.Variable)) else tf.convert_to_tensor(input)


def _dropout_dim(x, axis):
    size = x.shape[axis]
    return size if size is not None else tf.shape(x)[axis]


def _dropout_feature_noise_shape(x, unbatched=False):
    """Noise shape dropping whole channels of a channels-last tensor: (N, 1, ..., 1, C); (C, 1, ..., 1) unbatched."""
    rank = len(x.shape)
    if unbatched:
        return [_dropout_dim(x, 0)] + [1] * (rank - 1)
    if rank <= 2:
        return [_dropout_dim(x, axis) for axis in range(rank)]
    return [_dropout_dim(x, 0)] + [1] * (rank - 2) + [_dropout_dim(x, rank - 1)]


def _dropout_keep(noise_shape, p, dtype, seed):
    """1.0 where kept (probability 1 - p), 0.0 where dropped, in `dtype`."""
    return tf.cast(keras.random.uniform(noise_shape, dtype="float32", seed=seed) >= p, dtype)


def _dropout_train(x, p, noise_shape, seed):
    static = isinstance(p, (int, float))
    if static and p == 0:
        return x
    if static and p == 1:
        return x * tf.zeros([], x.dtype)
    scale = tf.cast(1.0 / (1.0 - p), x.dtype) if static else 1.0 / (1.0 - tf.cast(p, x.dtype))
    keep = tf.cast(keras.random.uniform(noise_shape, dtype="float32", seed=seed) >= tf.cast(p, "float32"), x.dtype)
    return x * (keep * scale)


def _dropout_alpha_train(x, p, noise_shape, seed):
    """torch's alpha dropout: kept x * a + alpha a p, dropped -alpha a + alpha a p (keeps SELU mean/variance)."""
    if p == 0:
        return x
    if p == 1:
        return x * tf.zeros([], x.dtype)
    a = 1.0 / math.sqrt((_DROPOUT_ALPHA * _DROPOUT_ALPHA * p + 1) * (1 - p))
    keep = _dropout_keep(noise_shape, p, x.dtype, seed)
    b = (keep - 1.0) * tf.cast(_DROPOUT_ALPHA * a, x.dtype) + tf.cast(_DROPOUT_ALPHA * a * p, x.dtype)
    return x * (keep * tf.cast(a, x.dtype)) + b


def _dropout_run(input, p, training, kind, unbatched, seed):
    _dropout_check_p(p)
    x = _dropout_tensor(input)
    if isinstance(p, (int, float)) and p == 0:
        return x
    train = _dropout_alpha_train if kind.endswith("alpha") else _dropout_train
    feature = kind.startswith("feature")
    return _dropout_select(
        training,
        lambda: train(x, p, _dropout_feature_noise_shape(x, unbatched) if feature else tf.shape(x), seed),
        lambda: x)


def _dropout1d_unbatched(x):
    rank = len(x.shape)
    if rank not in (2, 3):
        raise ValueError(f"dropout1d: Expected 2D or 3D input, but received a {rank}D input")
    return rank == 2


# ----------------------------------------------------------------------------------------------------------------
# Functions


def dropout(input, p=0.5, training=True, inplace=False):
    """F.dropout: elementwise."""
    return _dropout_run(input, p, training, "plain", False, _dropout_seed())


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """F.alpha_dropout (for SELU networks)."""
    return _dropout_run(input, p, training, "alpha", False, _dropout_seed())


def dropout1d(input, p=0.5, training=True, inplace=False):
    """F.dropout1d on a channels-last (N, L, C) or an unbatched (C, L) input: drops whole channels."""
    x = _dropout_tensor(input)
    return _dropout_run(x, p, training, "feature", _dropout1d_unbatched(x), _dropout_seed())


def dropout2d(input, p=0.5, training=True, inplace=False):
    """F.dropout2d on a channels-last (N, H, W, C) input (a 3-D input is (N, L, C), as torch treats it)."""
    return _dropout_run(input, p, training, "feature", False, _dropout_seed())


def dropout3d(input, p=0.5, training=True, inplace=False):
    """F.dropout3d on a channels-last (N, D, H, W, C) input, or an unbatched 4-D one."""
    x = _dropout_tensor(input)
    return _dropout_run(x, p, training, "feature", len(x.shape) == 4, _dropout_seed())


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """F.feature_alpha_dropout on a channels-last input: alpha dropout of whole channels."""
    return _dropout_run(input, p, training, "feature_alpha", False, _dropout_seed())


# ----------------------------------------------------------------------------------------------------------------
# Module classes


class _DropoutLayer(TorchLayer):
    porter_layout = "any"
    _dropout_kind = "plain"

    def __init__(self, p=0.5, inplace=False, **kwargs):
        super().__init__(**kwargs)
        _dropout_check_p(p)
        self.p, self.inplace = p, inplace
        self.seed_generator = keras.random.SeedGenerator() if p > 0 else None
        self.finish_init()

    def _dropout_unbatched(self, x):
        return False

    def call(self, x, training=None):
        return _dropout_run(x, self.p, training, self._dropout_kind, self._dropout_unbatched(x), self.seed_generator)

    def get_config(self):
        return {**super().get_config(), "p": self.p, "inplace": self.inplace}


class Dropout(_DropoutLayer):
    """torch.nn.Dropout(p, inplace): elementwise; identity in inference."""


class AlphaDropout(_DropoutLayer):
    """torch.nn.AlphaDropout(p, inplace)."""

    _dropout_kind = "alpha"


class Dropout1d(_DropoutLayer):
    """torch.nn.Dropout1d on channels-last (N, L, C) or unbatched (C, L): drops whole channels."""

    porter_layout = "channels_last"
    _dropout_kind = "feature"

    def _dropout_unbatched(self, x):
        return _dropout1d_unbatched(x)


class Dropout2d(_DropoutLayer):
    """torch.nn.Dropout2d on channels-last (N, H, W, C); 3-D input is (N, L, C) as in torch."""

    porter_layout = "channels_last"
    _dropout_kind = "feature"


class Dropout3d(_DropoutLayer):
    """torch.nn.Dropout3d on channels-last (N, D, H, W, C), or unbatched 4-D."""

    porter_layout = "channels_last"
    _dropout_kind = "feature"

    def _dropout_unbatched(self, x):
        return len(x.shape) == 4


class FeatureAlphaDropout(_DropoutLayer):
    """torch.nn.FeatureAlphaDropout on channels-last input: alpha dropout of whole channels."""

    porter_layout = "channels_last"
    _dropout_kind = "feature_alpha"
