"""torch's autocast API with the port's semantics: the port runs under no torch autocast (Keras mixed precision is
a dtype policy its layers apply themselves), so `autocast(...)` changes nothing, `is_autocast_enabled()` is False
and `get_autocast_dtype()` is the global policy's compute dtype."""

import contextlib

import keras
import tensorflow as tf


def autocast(device_type=None, dtype=None, enabled=True, cache_enabled=None):
    """torch.amp.autocast(...): a context that changes nothing (no torch autocast in the port)."""
    return contextlib.nullcontext()


def is_autocast_enabled(device_type=None):
    """torch.is_autocast_enabled(...): never, in the port."""
    return False


def get_autocast_dtype(device_type=None):
    """torch.get_autocast_dtype(...): the compute dtype of Keras' global dtype policy."""
    return tf.as_dtype(keras.config.dtype_policy().compute_dtype)


def attention_backend(*backends, **config):
    """torch.nn.attention.sdpa_kernel(...) / torch.backends.cuda.sdp_kernel(...): which CUDA kernel torch's
    attention runs, not what it computes: a context that changes nothing in the port."""
    return contextlib.nullcontext()
