"""torch's complex-number functions on TensorFlow tensors: complex64 values (XLA compiles them for CPU, GPU and
TPU), built and taken apart as torch does (`view_as_real` puts (real, imaginary) on a new last axis of size 2)."""

import tensorflow as tf


def polar(abs, angle):
    """torch.polar: abs * (cos(angle) + i sin(angle))."""
    abs, angle = tf.convert_to_tensor(abs), tf.convert_to_tensor(angle)
    return tf.complex(abs * tf.cos(angle), abs * tf.sin(angle))


def complex_from_parts(real, imag):
    """torch.complex(real, imag)."""
    return tf.complex(tf.convert_to_tensor(real), tf.convert_to_tensor(imag))


def view_as_complex(input):
    """torch.view_as_complex: a float tensor whose last axis has size 2 (real, imaginary) -> complex."""
    input = tf.convert_to_tensor(input)
    if input.shape[-1] is not None and input.shape[-1] != 2:
        raise ValueError(f"view_as_complex: the last dimension must have size 2, not {input.shape[-1]}")
    return tf.complex(input[..., 0], input[..., 1])


def view_as_real(input):
    """torch.view_as_real: complex -> float with (real, imaginary) on a new last axis."""
    input = tf.convert_to_tensor(input)
    return tf.stack([tf.math.real(input), tf.math.imag(input)], axis=-1)


def outer(input, vec2):
    """torch.outer / torch.ger: the outer product of two vectors (an integer vector meeting a float one is
    promoted to its dtype, as torch does)."""
    input, vec2 = tf.convert_to_tensor(input), tf.convert_to_tensor(vec2)
    if input.dtype != vec2.dtype:
        target = input.dtype if input.dtype.is_floating or input.dtype.is_complex else vec2.dtype
        input, vec2 = tf.cast(input, target), tf.cast(vec2, target)
    return input[:, None] * vec2[None, :]
