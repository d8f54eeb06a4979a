"""MXNet's elementwise math operators (`F.exp`, `F.log`, `F.sqrt`, ...) and `F.take`, with mxnet 1.9.1's semantics:
`round` rounds halves away from zero, `take` clips (or wraps) indices into range and truncates float ones."""

import tensorflow as tf


def _gluon_round(x):
    """Halves away from zero (tf.round would round them to even)."""
    return tf.sign(x) * tf.floor(tf.abs(x) + tf.cast(0.5, x.dtype))


GLUON_UNARY = {"exp": tf.exp, "log": tf.math.log, "log1p": tf.math.log1p, "expm1": tf.math.expm1, "sqrt": tf.sqrt,
               "rsqrt": tf.math.rsqrt, "square": tf.square, "abs": tf.abs, "negative": tf.negative,
               "reciprocal": tf.math.reciprocal, "erf": tf.math.erf, "sin": tf.sin, "cos": tf.cos, "floor": tf.floor,
               "ceil": tf.math.ceil, "round": _gluon_round, "sign": tf.sign}


def gluon_unary(data, op):
    """F.<op>(data) for the elementwise operator named `op` (a key of GLUON_UNARY)."""
    return GLUON_UNARY[op](tf.convert_to_tensor(data))


def gluon_take(a, indices, axis=0, mode="clip", name=None):
    """F.take(a, indices, axis, mode): slices of `a` along `axis` at `indices` (their shape replaces that axis);
    float indices truncated, out-of-range ones clipped ('clip') or wrapped ('wrap') into range."""
    x = tf.convert_to_tensor(a)
    index = tf.cast(tf.convert_to_tensor(indices), tf.int32)
    size = tf.shape(x)[axis]
    if mode == "wrap":
        index = tf.math.floormod(index, size)
    elif mode == "clip":
        index = tf.clip_by_value(index, 0, size - 1)
    else:
        raise ValueError(f"take: mode={mode!r} is not supported by porter yet")
    return tf.gather(x, index, axis=axis)
