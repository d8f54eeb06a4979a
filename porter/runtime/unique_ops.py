"""torch.unique on TensorFlow tensors: sorted distinct values (or slices along `dim`), with torch's inverse indices
and counts (int64). Run eagerly: its size depends on the values (XLA cannot compile it, as torch.compile cannot)."""

import tensorflow as tf


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002 - torch's names
    """torch.unique: the distinct values of `input` flattened (or its distinct slices along `dim`), ascending
    (slices in lexicographic order; torch sorts whatever `sorted` says on the CPU); then, where asked, the index
    of each element's (slice's) value in them, shaped as `input` (as its `dim`), and how often each occurs."""
    input = tf.convert_to_tensor(input)
    boolean = input.dtype == tf.bool
    values = tf.cast(input, tf.uint8) if boolean else input
    if dim is None:
        rows = tf.reshape(values, [-1, 1])
    else:
        dim = dim % len(input.shape)
        moved = tf.experimental.numpy.moveaxis(values, dim, 0)
        rows = tf.reshape(moved, [tf.shape(moved)[0], -1])
    distinct, first_seen = tf.raw_ops.UniqueV2(x=rows, axis=[0])  # in order of first occurrence
    order = tf.range(tf.shape(distinct)[0])
    for column in reversed(range(rows.shape[1])):  # lexicographic: stable sorts from the last column to the first
        order = tf.gather(order, tf.argsort(tf.gather(distinct[:, column], order), stable=True))
    distinct = tf.gather(distinct, order)
    inverse = tf.cast(tf.gather(tf.math.invert_permutation(order), first_seen), tf.int64)
    if dim is None:
        result = tf.reshape(distinct, [-1])
        inverse_shaped = tf.reshape(inverse, tf.shape(input))
    else:
        result = tf.experimental.numpy.moveaxis(
            tf.reshape(distinct, tf.concat([[-1], tf.shape(moved)[1:]], 0)), 0, dim)
        inverse_shaped = inverse
    if boolean:
        result = tf.cast(result, tf.bool)
    outputs = (result,)
    if return_inverse:
        outputs += (inverse_shaped,)
    if return_counts:
        outputs += (tf.math.bincount(inverse, minlength=tf.shape(distinct, out_type=tf.int64)[0], dtype=tf.int64),)
    return outputs[0] if len(outputs) == 1 else outputs
