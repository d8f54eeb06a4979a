"""torch.cosine_similarity on TensorFlow tensors, with torch 2.x's formula."""

import tensorflow as tf


def _cosine_norm(x, dim, eps):
    """||x|| along dim (kept), clamped below at eps in value only: torch clamps the norm in place under no_grad,
    so its gradient is the unclamped norm's."""
    norm = tf.norm(x, axis=dim, keepdims=True)
    return norm + tf.stop_gradient(tf.maximum(norm, eps) - norm)


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps), dim) after broadcasting x1 and x2 (torch >= 2.0: each
    tensor is divided by its own clamped norm, which keeps the result in [-1, 1])."""
    x1, x2 = tf.convert_to_tensor(x1), tf.convert_to_tensor(x2)
    if not x1.dtype.is_floating:
        x1 = tf.cast(x1, tf.float32)
    x2 = tf.cast(x2, x1.dtype)
    shape = tf.broadcast_static_shape(x1.shape, x2.shape) if x1.shape.is_fully_defined() and \
        x2.shape.is_fully_defined() else tf.broadcast_dynamic_shape(tf.shape(x1), tf.shape(x2))
    x1, x2 = tf.broadcast_to(x1, shape), tf.broadcast_to(x2, shape)
    return tf.reduce_sum((x1 / _cosine_norm(x1, dim, eps)) * (x2 / _cosine_norm(x2, dim, eps)), axis=dim)
