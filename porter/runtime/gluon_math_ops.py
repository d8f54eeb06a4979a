"""MXNet operators attention and sequence code calls through `F`: batch_dot and dot (with transpose_a/b),
broadcast_* arithmetic, expand_dims, split (num_outputs, squeeze_axis), repeat, SequenceMask, one_hot and where,
with mxnet 1.9.1's semantics and parameter names (`name=` ignored)."""

import tensorflow as tf


def gluon_batch_dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None, name=None):
    """F.batch_dot: a matrix product per batch entry, (B, N, K) x (B, K, M) -> (B, N, M)."""
    lhs, rhs = tf.convert_to_tensor(lhs), tf.convert_to_tensor(rhs)
    return tf.matmul(lhs, tf.cast(rhs, lhs.dtype), transpose_a=transpose_a, transpose_b=transpose_b)


def gluon_dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None, name=None):
    """F.dot: the last axis of lhs contracted with the first of rhs; transpose_a/b reverse all axes first. A matrix
    rhs (the usual weight) runs as one MatMul with its transpose flags: no Transpose op."""
    lhs, rhs = tf.convert_to_tensor(lhs), tf.convert_to_tensor(rhs)
    rhs = tf.cast(rhs, lhs.dtype)
    if len(rhs.shape) == 2 and len(lhs.shape) >= 2 and (not transpose_a or len(lhs.shape) == 2):
        if len(lhs.shape) == 2:
            return tf.matmul(lhs, rhs, transpose_a=transpose_a, transpose_b=transpose_b)
        leading = tf.shape(lhs)[:-1]
        product = tf.matmul(tf.reshape(lhs, [-1, lhs.shape[-1]]), rhs, transpose_b=transpose_b)
        return tf.reshape(product, tf.concat([leading, tf.shape(product)[1:]], axis=0))
    if transpose_a:
        lhs = tf.transpose(lhs)
    if transpose_b:
        rhs = tf.transpose(rhs)
    return tf.tensordot(lhs, rhs, axes=1)


def _gluon_pair(lhs, rhs):
    lhs = tf.convert_to_tensor(lhs)
    return lhs, tf.cast(tf.convert_to_tensor(rhs), lhs.dtype)


def gluon_broadcast_add(lhs, rhs, name=None):
    """F.broadcast_add (numpy broadcasting)."""
    lhs, rhs = _gluon_pair(lhs, rhs)
    return lhs + rhs


def gluon_broadcast_sub(lhs, rhs, name=None):
    """F.broadcast_sub / broadcast_minus."""
    lhs, rhs = _gluon_pair(lhs, rhs)
    return lhs - rhs


def gluon_broadcast_mul(lhs, rhs, name=None):
    """F.broadcast_mul."""
    lhs, rhs = _gluon_pair(lhs, rhs)
    return lhs * rhs


def gluon_broadcast_div(lhs, rhs, name=None):
    """F.broadcast_div (integer operands: the quotient truncated toward zero in their dtype, as mxnet does)."""
    lhs, rhs = _gluon_pair(lhs, rhs)
    return tf.truncatediv(lhs, rhs) if lhs.dtype.is_integer else lhs / rhs


def gluon_broadcast_maximum(lhs, rhs, name=None):
    """F.broadcast_maximum."""
    lhs, rhs = _gluon_pair(lhs, rhs)
    return tf.maximum(lhs, rhs)


def gluon_broadcast_minimum(lhs, rhs, name=None):
    """F.broadcast_minimum."""
    lhs, rhs = _gluon_pair(lhs, rhs)
    return tf.minimum(lhs, rhs)


def gluon_expand_dims(data, axis, name=None):
    """F.expand_dims(data, axis)."""
    return tf.expand_dims(tf.convert_to_tensor(data), axis)


def gluon_split(data, num_outputs, axis=1, squeeze_axis=False, name=None):
    """F.split: `num_outputs` equal parts along `axis` (a list; one part alone when num_outputs is 1), each
    without that axis when `squeeze_axis`."""
    x = tf.convert_to_tensor(data)
    parts = tf.split(x, num_outputs, axis=axis)
    if squeeze_axis:
        parts = [tf.squeeze(part, axis=axis) for part in parts]
    return parts[0] if num_outputs == 1 else parts


def gluon_repeat(data, repeats, axis=None, name=None):
    """F.repeat: each element `repeats` times along `axis` (None: of the flattened array)."""
    x = tf.convert_to_tensor(data)
    return tf.repeat(tf.reshape(x, [-1]) if axis is None else x, repeats, axis=0 if axis is None else axis)


def gluon_sequence_mask(data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0, name=None):
    """F.SequenceMask: positions at or past each sequence's length along `axis` (0: (T, N, ...), 1: (N, T, ...))
    set to `value`; the data unchanged unless `use_sequence_length`."""
    x = tf.convert_to_tensor(data)
    if not use_sequence_length:
        return x
    if axis not in (0, 1):
        raise ValueError(f"SequenceMask: axis must be 0 or 1, got {axis}")
    steps = tf.range(tf.shape(x)[axis])
    lengths = tf.cast(tf.convert_to_tensor(sequence_length), tf.int32)
    # (T, N) for axis 0, (N, T) for axis 1, built in that order (no Transpose)
    keep = steps[:, None] < lengths[None, :] if axis == 0 else steps[None, :] < lengths[:, None]
    keep = tf.reshape(keep, tf.concat([tf.shape(keep), tf.ones([tf.rank(x) - 2], tf.int32)], axis=0))
    return tf.where(keep, x, tf.cast(value, x.dtype))


def gluon_fully_connected(data, weight, bias=None, num_hidden=None, no_bias=False, flatten=True, name=None):
    """F.FullyConnected: data x weight^T + bias with weight (num_hidden, in_units); `flatten` first flattens every
    axis after the first, otherwise the product runs over the last axis and keeps the others."""
    x = tf.convert_to_tensor(data)
    weight = tf.cast(tf.convert_to_tensor(weight), x.dtype)
    if flatten and len(x.shape) != 2:
        x = tf.reshape(x, [-1, weight.shape[1] if weight.shape[1] is not None else tf.shape(weight)[1]])
    if len(x.shape) == 2:
        y = tf.matmul(x, weight, transpose_b=True)
    else:
        leading = tf.shape(x)[:-1]
        y = tf.matmul(tf.reshape(x, [-1, x.shape[-1]]), weight, transpose_b=True)
        y = tf.reshape(y, tf.concat([leading, tf.shape(weight)[:1]], axis=0))
    if bias is not None and not no_bias:
        y = y + tf.cast(tf.convert_to_tensor(bias), y.dtype)
    return y


def gluon_one_hot(indices, depth, on_value=1.0, off_value=0.0, dtype="float32", name=None):
    """F.one_hot: a new last axis of `depth` entries, `on_value` at each index and `off_value` elsewhere; float
    indices (Gluon's token ids) are truncated to integers, and an index outside [0, depth) gives a row of
    `off_value`, as in mxnet."""
    indices = tf.convert_to_tensor(indices)
    if not indices.dtype.is_integer:
        indices = tf.cast(indices, tf.int64)
    dtype = tf.as_dtype(getattr(dtype, "__name__", dtype))
    return tf.one_hot(indices, depth, on_value=tf.cast(on_value, dtype), off_value=tf.cast(off_value, dtype),
                      dtype=dtype)


def gluon_where(condition, x, y, name=None):
    """F.where: x where `condition` is nonzero, else y (mxnet's condition is a number tensor, not a boolean one);
    a condition of rank 1 against higher-rank x picks whole rows, as in mxnet."""
    x = tf.convert_to_tensor(x)
    y = tf.cast(tf.convert_to_tensor(y), x.dtype)
    condition = tf.convert_to_tensor(condition)
    keep = condition if condition.dtype == tf.bool else tf.not_equal(condition, tf.zeros([], condition.dtype))
    if len(keep.shape) == 1 and len(x.shape) > 1:
        keep = tf.reshape(keep, [-1] + [1] * (len(x.shape) - 1))
    return tf.where(keep, x, y)
