"""torch.roll on TensorFlow tensors: a cyclic shift along axes, or of the flattened tensor when no axis is given."""

import tensorflow as tf


def _roll_list(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def roll(input, shifts, dims=None):
    """torch.roll(input, shifts, dims): shifts of any size (taken modulo the axis size) and sign; an int and a
    one-element tuple are the same thing, as in torch."""
    input = tf.convert_to_tensor(input)
    shifts = _roll_list(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise ValueError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, dims: 0")
        shape = input.shape if input.shape.is_fully_defined() else tf.shape(input)
        return tf.reshape(tf.roll(tf.reshape(input, [-1]), shifts[0], 0), shape)
    dims = _roll_list(dims)
    if len(dims) != len(shifts):
        raise ValueError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, dims: {len(dims)}")
    return tf.roll(input, shifts, dims)
