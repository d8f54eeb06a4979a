"""MXNet operators sequence models (GluonNLP's BERT and Transformer) call through `F`: contrib.arange_like,
broadcast_like / broadcast_axis, the broadcast comparisons, cast / astype, the Embedding operator, gather_nd,
reshape_like, shape_array and stack, with mxnet 1.9.1's semantics (comparisons give 1/0 in the operands' dtype;
Embedding truncates float ids and clips them into range; `name=` ignored)."""

import tensorflow as tf

from porter.runtime.gluon_ops import _gluon_dtype


def gluon_arange_like(data, start=0.0, step=1.0, repeat=1, ctx=None, axis=None, name=None):
    """F.contrib.arange_like: start, start + step, ... (each `repeat` times) in data's dtype (integer data takes
    start and step truncated, as mxnet does), shaped like `data` (no axis) or as long as data's `axis`."""
    x = tf.convert_to_tensor(data)
    count = tf.size(x) if axis is None else tf.shape(x)[axis]
    index = tf.cast(tf.math.floordiv(tf.range(count), repeat), x.dtype)
    values = tf.cast(start, x.dtype) + tf.cast(step, x.dtype) * index
    return tf.reshape(values, tf.shape(x)) if axis is None else values


def gluon_broadcast_like(lhs, rhs, lhs_axes=None, rhs_axes=None, name=None):
    """F.broadcast_like: lhs broadcast to rhs's shape, or only lhs's `lhs_axes` to the sizes of rhs's `rhs_axes`."""
    x, like = tf.convert_to_tensor(lhs), tf.convert_to_tensor(rhs)
    if lhs_axes is None:
        return tf.broadcast_to(x, tf.shape(like))
    lhs_axes = [lhs_axes] if isinstance(lhs_axes, int) else list(lhs_axes)
    rhs_axes = [rhs_axes] if isinstance(rhs_axes, int) else list(rhs_axes)
    shape = tf.unstack(tf.shape(x))
    for lhs_axis, rhs_axis in zip(lhs_axes, rhs_axes):
        shape[lhs_axis] = tf.shape(like)[rhs_axis]
    return tf.broadcast_to(x, tf.stack(shape))


def gluon_broadcast_axis(data, axis=(), size=(), name=None):
    """F.broadcast_axis / broadcast_axes: the size-1 axes `axis` repeated to `size`."""
    x = tf.convert_to_tensor(data)
    axes = [axis] if isinstance(axis, int) else list(axis)
    sizes = [size] if isinstance(size, int) else list(size)
    shape = tf.unstack(tf.shape(x))
    for one_axis, one_size in zip(axes, sizes):
        shape[one_axis] = one_size
    return tf.broadcast_to(x, tf.stack(shape))


def gluon_broadcast_compare(lhs, rhs, compare, name=None):
    """F.broadcast_<comparison> (equal, lesser, ...: porter/rules/gluon_sequence_ops.py's COMPARISONS): 1 where the
    tf.math comparison named `compare` holds, else 0, in lhs's dtype (numpy broadcasting)."""
    lhs = tf.convert_to_tensor(lhs)
    rhs = tf.cast(tf.convert_to_tensor(rhs), lhs.dtype)
    return tf.cast(getattr(tf.math, compare)(lhs, rhs), lhs.dtype)


def gluon_cast(data, dtype, copy=True, name=None):
    """F.cast / x.astype(dtype): float to integer truncates toward zero, as in mxnet."""
    return tf.cast(tf.convert_to_tensor(data), _gluon_dtype(dtype))


def gluon_embedding_lookup(data, weight, input_dim=None, output_dim=None, dtype="float32", sparse_grad=False,
                           name=None):
    """F.Embedding(data, weight, input_dim, output_dim): the rows of `weight` at the ids in `data` (float ids
    truncated, ids outside [0, input_dim) clipped into it, as mxnet does); the result has one axis more."""
    weight = tf.convert_to_tensor(weight)
    ids = tf.convert_to_tensor(data)
    if not ids.dtype.is_integer:
        ids = tf.cast(ids, tf.int32)
    rows = tf.shape(weight, out_type=ids.dtype)[0] if input_dim is None else tf.cast(input_dim, ids.dtype)
    return tf.gather(weight, tf.clip_by_value(ids, tf.zeros([], ids.dtype), rows - 1))


def gluon_gather_nd(data, indices, name=None):
    """F.gather_nd: with indices of shape (M, Y0, ...), out[y...] = data[indices[0, y...], ..., indices[M-1, y...]]
    of shape (Y0, ...) + data.shape[M:]; run as one gather over data's first M axes flattened (no Transpose)."""
    x = tf.convert_to_tensor(data)
    index = tf.cast(tf.convert_to_tensor(indices), tf.int32)
    depth = index.shape[0]
    sizes = tf.shape(x)[:depth]
    flat = tf.zeros(tf.shape(index)[1:], tf.int32)
    for axis in range(depth):
        flat = flat * sizes[axis] + index[axis]
    rows = tf.reshape(x, tf.concat([[-1], tf.shape(x)[depth:]], axis=0))
    return tf.gather(rows, flat)


def _gluon_span(begin, end, rank):
    begin = 0 if begin is None else (begin + rank if begin < 0 else begin)
    end = rank if end is None else (end + rank if end < 0 else end)
    return begin, end


def gluon_reshape_like(lhs, rhs, lhs_begin=None, lhs_end=None, rhs_begin=None, rhs_end=None, name=None):
    """F.reshape_like / x.reshape_like(rhs, ...): lhs's axes [lhs_begin, lhs_end) replaced by rhs's axes
    [rhs_begin, rhs_end) (the whole shapes when none are given)."""
    x, like = tf.convert_to_tensor(lhs), tf.convert_to_tensor(rhs)
    lhs_begin, lhs_end = _gluon_span(lhs_begin, lhs_end, len(x.shape))
    rhs_begin, rhs_end = _gluon_span(rhs_begin, rhs_end, len(like.shape))
    shape, like_shape = tf.shape(x), tf.shape(like)
    return tf.reshape(x, tf.concat([shape[:lhs_begin], like_shape[rhs_begin:rhs_end], shape[lhs_end:]], axis=0))


def gluon_shape_array(data, name=None):
    """F.shape_array: the shape as an int64 vector."""
    return tf.shape(tf.convert_to_tensor(data), out_type=tf.int64)


def gluon_stack(*data, axis=0, num_args=None, name=None):
    """F.stack: the arrays joined along a new axis `axis`."""
    return tf.stack([tf.convert_to_tensor(x) for x in data], axis=axis)
