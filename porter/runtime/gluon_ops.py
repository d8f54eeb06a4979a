"""MXNet operators as Gluon code calls them through `F` (`mx.nd`/`mx.sym`): F.Activation, F.relu, F.clip, ...

Functions take mxnet's parameter names (`data`, `act_type`, `a_min`/`a_max`) and ignore its `name=` argument
(a symbol name, meaningless in Keras).
"""

import tensorflow as tf


def gluon_activation(data, act_type, name=None):
    """F.Activation(data, act_type): 'relu', 'sigmoid', 'tanh', 'softrelu' (log(1 + e^x)) or 'softsign'."""
    x = tf.convert_to_tensor(data)
    if act_type == "relu":
        return tf.nn.relu(x)
    if act_type == "sigmoid":
        return tf.math.sigmoid(x)
    if act_type == "tanh":
        return tf.math.tanh(x)
    if act_type == "softrelu":
        return tf.math.softplus(x)
    if act_type == "softsign":
        return x / (1.0 + tf.abs(x))
    raise ValueError(f"Activation: unknown act_type {act_type!r} (mxnet takes relu, sigmoid, tanh, softrelu, "
                     f"softsign)")


def gluon_leaky_relu(data, act_type="leaky", slope=0.25, name=None):
    """F.LeakyReLU(data, act_type='leaky', slope): x if x >= 0 else slope * x ('elu': slope * (e^x - 1); 'gelu':
    the exact x * Phi(x), GluonNLP's BERT; 'selu': its fixed scale and alpha)."""
    x = tf.convert_to_tensor(data)
    if act_type == "leaky":
        return tf.where(x >= 0, x, x * tf.cast(slope, x.dtype))
    if act_type == "elu":
        return tf.where(x > 0, x, tf.cast(slope, x.dtype) * tf.math.expm1(x))
    if act_type == "gelu":
        return 0.5 * x * (1.0 + tf.math.erf(x / tf.cast(1.4142135623730951, x.dtype)))
    if act_type == "selu":
        return tf.nn.selu(x)
    raise NotImplementedError(f"LeakyReLU: act_type={act_type!r} is not supported by porter yet")


def gluon_relu(data, name=None):
    """F.relu."""
    return tf.nn.relu(tf.convert_to_tensor(data))


def gluon_sigmoid(data, name=None):
    """F.sigmoid."""
    return tf.math.sigmoid(tf.convert_to_tensor(data))


def gluon_tanh(data, name=None):
    """F.tanh."""
    return tf.math.tanh(tf.convert_to_tensor(data))


def gluon_softsign(data, name=None):
    """F.softsign: x / (1 + |x|)."""
    x = tf.convert_to_tensor(data)
    return x / (1.0 + tf.abs(x))


def gluon_clip(data, a_min, a_max, name=None):
    """F.clip(data, a_min, a_max): values limited to [a_min, a_max]."""
    x = tf.convert_to_tensor(data)
    return tf.clip_by_value(x, tf.cast(a_min, x.dtype), tf.cast(a_max, x.dtype))


def gluon_full_reduction(value):
    """A reduction over every axis as mxnet 1.x returns it: shape (1,), not a scalar."""
    return tf.reshape(tf.convert_to_tensor(value), [1])


def _gluon_dtype(dtype, default="float32"):
    """mxnet's dtype argument (a name, a numpy type, a tf.DType or None) as a TF dtype; None is mxnet's float32."""
    import numpy as np

    if dtype is None:
        return tf.as_dtype(default)
    if isinstance(dtype, tf.DType):
        return dtype
    return tf.as_dtype(np.dtype(dtype).name if not isinstance(dtype, str) else dtype)


def _gluon_shape(shape):
    return [shape] if isinstance(shape, int) else list(shape)


def gluon_zeros(shape, ctx=None, dtype=None, stype=None, name=None):
    """mx.nd.zeros(shape): float32 unless `dtype` says otherwise."""
    return tf.zeros(_gluon_shape(shape), _gluon_dtype(dtype))


def gluon_ones(shape, ctx=None, dtype=None, stype=None, name=None):
    """mx.nd.ones(shape)."""
    return tf.ones(_gluon_shape(shape), _gluon_dtype(dtype))


def gluon_full(shape, val, ctx=None, dtype=None, out=None, name=None):
    """mx.nd.full(shape, val)."""
    return tf.fill(_gluon_shape(shape), tf.cast(val, _gluon_dtype(dtype)))


def gluon_array(source_array, ctx=None, dtype=None):
    """mx.nd.array(source): a tensor holding `source`; float32 unless `dtype` is given or `source` is a tensor
    already (mxnet keeps an NDArray's dtype)."""
    if dtype is None and tf.is_tensor(source_array):
        return tf.identity(source_array)
    return tf.convert_to_tensor(_gluon_numpy(source_array), _gluon_dtype(dtype))


def _gluon_numpy(source):
    import numpy as np

    return np.asarray(source.numpy() if hasattr(source, "numpy") else source)


def gluon_arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype="float32", name=None):
    """mx.nd.arange(start, stop, step, repeat): start, start + step, ... below stop (one argument: from 0), each
    value `repeat` times; float32 by default."""
    if stop is None:
        start, stop = 0, start
    values = tf.range(tf.cast(start, tf.float64), tf.cast(stop, tf.float64), tf.cast(step, tf.float64))
    values = tf.cast(values, _gluon_dtype(dtype))
    return tf.repeat(values, repeat) if repeat != 1 else values
