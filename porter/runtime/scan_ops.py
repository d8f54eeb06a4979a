"""torch's running reductions (cumprod) on TensorFlow tensors, torch's signature and dtype rules."""

import tensorflow as tf

from porter.runtime.tensor_ops import _as_dtype


def cumprod(input, dim, dtype=None):
    """torch.cumprod: the running product along `dim`; integer and bool inputs give int64 as in torch."""
    input = tf.convert_to_tensor(input)
    if dtype is not None:
        input = tf.cast(input, _as_dtype(dtype))
    elif input.dtype.is_integer or input.dtype == tf.bool:
        input = tf.cast(input, tf.int64)
    return tf.math.cumprod(input, axis=dim)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """torch.diff: the n-th forward difference along `dim` (`prepend`/`append` joined first); bool inputs give
    `!=` of neighbours as in torch."""
    input = tf.convert_to_tensor(input)
    parts = [tf.convert_to_tensor(p, input.dtype) for p in (prepend,) if p is not None] + [input] + [
        tf.convert_to_tensor(a, input.dtype) for a in (append,) if a is not None]
    value = tf.concat(parts, axis=dim) if len(parts) > 1 else input
    length = value.shape[dim]
    for _ in range(n):
        upper = tf.gather(value, tf.range(1, length), axis=dim)
        lower = tf.gather(value, tf.range(0, length - 1), axis=dim)
        value = tf.not_equal(upper, lower) if value.dtype == tf.bool else upper - lower
        length -= 1
    return value

