"""torch's running reductions (cumprod) on TensorFlow tensors, torch's signature and dtype rules."""

import tensorflow as tf

from porter.runtime.tensor_ops import scan_input


def cumprod(input, dim, dtype=None):
    """torch.cumprod: the running product along `dim`; integer and bool inputs give int64 as in torch."""
    return tf.math.cumprod(scan_input(input, dtype), axis=dim)


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

