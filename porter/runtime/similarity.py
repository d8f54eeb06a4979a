"""torch.cosine_similarity and pairwise_distance (nn.PairwiseDistance) on TensorFlow tensors, with torch 2.x's
formulas."""

import tensorflow as tf

from porter.runtime.base import TorchLayer


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


def pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    """torch's pairwise_distance: the p-norm of `x1 - x2 + eps` along the last dim (after broadcasting)."""
    x1, x2 = tf.convert_to_tensor(x1), tf.convert_to_tensor(x2)
    if not x1.dtype.is_floating:
        x1 = tf.cast(x1, tf.float32)
    difference = tf.abs(x1 - tf.cast(x2, x1.dtype) + eps)
    if p == float("inf"):
        return tf.reduce_max(difference, axis=-1, keepdims=keepdim)
    if p == 0:
        return tf.reduce_sum(tf.cast(difference != 0, x1.dtype), axis=-1, keepdims=keepdim)
    if p == 1:
        return tf.reduce_sum(difference, axis=-1, keepdims=keepdim)
    if p == 2:
        return tf.sqrt(tf.reduce_sum(tf.square(difference), axis=-1, keepdims=keepdim))
    return tf.pow(tf.reduce_sum(tf.pow(difference, p), axis=-1, keepdims=keepdim), 1.0 / p)


class PairwiseDistance(TorchLayer):
    """torch.nn.PairwiseDistance(p, eps, keepdim): `pairwise_distance` of its two inputs (torch's order)."""

    porter_layout = "source"

    def __init__(self, p=2.0, eps=1e-06, keepdim=False, **kwargs):
        super().__init__(**kwargs)
        self.norm_degree, self.eps, self.keepdim = p, eps, keepdim
        self.finish_init()

    def call(self, x1, x2):
        return pairwise_distance(x1, x2, self.norm_degree, self.eps, self.keepdim)

    def get_config(self):
        return {**super().get_config(), "p": self.norm_degree, "eps": self.eps, "keepdim": self.keepdim}
