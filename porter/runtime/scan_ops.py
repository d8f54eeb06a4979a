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
