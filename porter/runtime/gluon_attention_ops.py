"""MXNet's attention operators as GluonNLP calls them: contrib.interleaved_matmul_selfatt_qk / _valatt (the fused
self-attention of BERT: time-major (T, N, heads * 3 * head_dim) projections interleaved per head as (q, k, v)),
contrib.div_sqrt_dim, and softmax / log_softmax with their extra arguments (softmax's valid `length` per row with
`use_length`, `temperature`, an output `dtype`). Einsum products: no Transpose in the graph."""

import tensorflow as tf

from porter.runtime.gluon_ops import _gluon_dtype


def _gluon_heads_split(queries_keys_values, heads):
    """(T, N, heads * 3 * D) -> (T, N, heads, 3, D) and D."""
    x = tf.convert_to_tensor(queries_keys_values)
    head_dim = x.shape[-1] // (3 * heads) if x.shape[-1] is not None else tf.shape(x)[-1] // (3 * heads)
    shape = tf.shape(x)
    return tf.reshape(x, tf.stack([shape[0], shape[1], heads, 3, head_dim])), head_dim


def gluon_interleaved_matmul_selfatt_qk(queries_keys_values, heads, name=None):
    """F.contrib.interleaved_matmul_selfatt_qk: the (N * heads, T, T) scores q k^T of each head, q scaled by
    1/sqrt(head_dim) first, read from the interleaved (T, N, heads * 3 * head_dim) projection."""
    split, head_dim = _gluon_heads_split(queries_keys_values, heads)
    queries = split[:, :, :, 0, :] / tf.sqrt(tf.cast(head_dim, split.dtype))
    keys = split[:, :, :, 1, :]
    scores = tf.einsum("tnhd,snhd->nhts", queries, keys)
    shape = tf.shape(scores)
    return tf.reshape(scores, tf.stack([shape[0] * shape[1], shape[2], shape[3]]))


def gluon_interleaved_matmul_selfatt_valatt(queries_keys_values, attention, heads, name=None):
    """F.contrib.interleaved_matmul_selfatt_valatt: the (T, N, heads * head_dim) weighted sum of each head's values
    (the interleaved projection's third part) by attention weights of shape (N * heads, T, T)."""
    split, head_dim = _gluon_heads_split(queries_keys_values, heads)
    values = split[:, :, :, 2, :]
    weights = tf.cast(tf.convert_to_tensor(attention), values.dtype)
    shape = tf.shape(values)
    weights = tf.reshape(weights, tf.stack([shape[1], heads, shape[0], shape[0]]))
    context = tf.einsum("nhts,snhd->tnhd", weights, values)
    return tf.reshape(context, tf.stack([shape[0], shape[1], heads * head_dim]))


def gluon_div_sqrt_dim(data, name=None):
    """F.contrib.div_sqrt_dim: data divided by the square root of its last axis's size."""
    x = tf.convert_to_tensor(data)
    return x / tf.sqrt(tf.cast(tf.shape(x)[-1], x.dtype))


def _gluon_valid(x, length, axis):
    """A boolean mask of x's shape: True at positions along `axis` below each row's `length` (whose shape is x's
    without `axis`)."""
    axis = axis % len(x.shape)
    steps = tf.range(tf.shape(x)[axis])
    steps = tf.reshape(steps, [-1] + [1] * (len(x.shape) - 1 - axis))
    lengths = tf.expand_dims(tf.cast(tf.convert_to_tensor(length), tf.int32), axis)
    return steps < lengths


def _gluon_softmax_logits(data, temperature, dtype):
    """F.softmax's and F.log_softmax's input: in `dtype` when given, divided by `temperature` when given."""
    x = tf.convert_to_tensor(data) if dtype is None else tf.cast(data, _gluon_dtype(dtype))
    return x if temperature is None else x / tf.cast(temperature, x.dtype)


def gluon_softmax(data, length=None, axis=-1, temperature=None, dtype=None, use_length=False, name=None):
    """F.softmax: softmax(data / temperature) along `axis`; with `use_length`, only the first `length` positions of
    each row take part and the others are 0 (a row of length 0 is all 0); the result in `dtype` when given."""
    x = _gluon_softmax_logits(data, temperature, dtype)
    if not use_length:
        return tf.nn.softmax(x, axis=axis)
    valid = _gluon_valid(x, length, axis)
    shifted = x - tf.stop_gradient(tf.reduce_max(tf.where(valid, x, x.dtype.min), axis=axis, keepdims=True))
    exponentials = tf.where(valid, tf.exp(tf.where(valid, shifted, tf.zeros_like(shifted))), tf.zeros_like(x))
    total = tf.reduce_sum(exponentials, axis=axis, keepdims=True)
    return exponentials / tf.where(total > 0, total, tf.ones_like(total))


def gluon_log_softmax(data, axis=-1, temperature=None, dtype=None, use_length=False, name=None):
    """F.log_softmax: log-softmax(data / temperature) along `axis`, in `dtype` when given (mxnet 1.9's
    log_softmax takes no `length`, so `use_length` changes nothing)."""
    x = _gluon_softmax_logits(data, temperature, dtype)
    return tf.nn.log_softmax(x, axis=axis)
