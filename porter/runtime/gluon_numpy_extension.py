"""mxnet.npx operators with no torch or legacy-Gluon counterpart of the same meaning: npx.reshape's shape codes,
npx.pick, npx.topk (float32 indices by default), npx.layer_norm, and np.linalg.norm."""

import numpy as np
import tensorflow as tf

from porter.runtime.gluon_shape_ops import NPX_RESHAPE_CODES, reshape_by_codes


def npx_reshape(a, newshape, reverse=False, order="C"):
    """npx.reshape(a, newshape): NumPy's reshape with mxnet's shape codes (NPX_RESHAPE_CODES: -1 infers one size,
    -2 copies an input dim, -3 drops an input dim of size 1, -4 copies every remaining input dim, -5 merges two
    input dims, -6 splits one input dim into the two sizes after it); reverse=True reads them from the right. Unlike
    the legacy reshape, it refuses a second -1 anywhere in newshape, a split's sizes included."""
    codes = [int(newshape)] if isinstance(newshape, (int, np.integer)) else [int(code) for code in newshape]
    if codes.count(-1) > 1:
        raise ValueError(f"npx.reshape: newshape {tuple(codes)} has more than one -1")
    return reshape_by_codes(a, codes, NPX_RESHAPE_CODES, reverse=reverse, what="npx.reshape")


def _along(x, axis):
    return axis + x.shape.rank if axis < 0 else axis


def npx_pick(data, index, axis=-1, mode="clip", keepdims=False):
    """npx.pick: the entry of `data` at `index` along `axis` (one index per position of the other axes); indices
    outside the axis are clipped ('clip') or wrapped ('wrap')."""
    x = tf.convert_to_tensor(data)
    axis = _along(x, axis)
    size = tf.shape(x, out_type=tf.int64)[axis]
    index = tf.cast(tf.convert_to_tensor(index), tf.int64)
    index = tf.math.floormod(index, size) if mode == "wrap" else tf.clip_by_value(index, 0, size - 1)
    picked = tf.gather(x, tf.expand_dims(index, axis), axis=axis, batch_dims=axis)
    return picked if keepdims else tf.squeeze(picked, axis)


def npx_topk(data, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    """npx.topk: the k largest (smallest with is_ascend) entries along `axis`: their indices (as `dtype`, float32
    unless told), values, both ([values, indices]) or a mask of data's shape marking them."""
    x = tf.convert_to_tensor(data)
    if axis is None:
        x, axis = tf.reshape(x, [-1]), 0
    axis = _along(x, axis)
    last = x.shape.rank - 1
    moved = x if axis == last else tf.experimental.numpy.moveaxis(x, axis, -1)
    values, indices = tf.math.top_k(-moved if is_ascend else moved, k=k)
    values = -values if is_ascend else values
    if axis != last:
        values = tf.experimental.numpy.moveaxis(values, -1, axis)
        indices = tf.experimental.numpy.moveaxis(indices, -1, axis)
    if ret_typ == "value":
        return values
    cast = tf.cast(indices, tf.as_dtype(dtype))
    if ret_typ == "indices":
        return cast
    if ret_typ == "both":
        return [values, cast]
    if ret_typ == "mask":
        hits = tf.reduce_sum(tf.one_hot(indices, tf.shape(x)[axis], dtype=x.dtype, axis=-1), axis=axis)
        return tf.experimental.numpy.moveaxis(hits, -1, axis) if axis != last else hits
    raise ValueError(f"npx.topk: unknown ret_typ {ret_typ!r}")


def npx_layer_norm(data, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False):
    """npx.layer_norm: normalised along `axis` (biased variance), scaled by gamma and shifted by beta there."""
    if output_mean_var:
        raise NotImplementedError("npx.layer_norm(output_mean_var=True) is not supported by porter yet")
    x = tf.convert_to_tensor(data)
    axis = _along(x, axis)
    mean, variance = tf.nn.moments(x, axes=[axis], keepdims=True)
    shape = [1] * x.shape.rank
    shape[axis] = -1
    gamma = tf.reshape(tf.cast(gamma, x.dtype), shape)
    beta = tf.reshape(tf.cast(beta, x.dtype), shape)
    return (x - mean) * tf.math.rsqrt(variance + eps) * gamma + beta


def np_linalg_norm(x, ord=None, axis=None, keepdims=False):
    """np.linalg.norm: the 2-norm (Frobenius for matrices, of every entry when `axis` is None); ord 1 and inf of
    vectors along an int axis."""
    x = tf.convert_to_tensor(x)
    axes = None if axis is None else axis if isinstance(axis, (tuple, list)) else [axis]
    if ord in (None, 2, "fro") and (ord != 2 or axes is None or len(axes) == 1):
        return tf.sqrt(tf.reduce_sum(tf.square(x), axis=axes, keepdims=keepdims))
    if ord == 1 and axes is not None and len(axes) == 1:
        return tf.reduce_sum(tf.abs(x), axis=axes, keepdims=keepdims)
    if ord in (np.inf, float("inf")) and axes is not None and len(axes) == 1:
        return tf.reduce_max(tf.abs(x), axis=axes, keepdims=keepdims)
    raise NotImplementedError(f"np.linalg.norm(ord={ord!r}, axis={axis!r}) is not supported by porter yet")
