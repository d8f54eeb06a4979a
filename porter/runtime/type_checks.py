"""torch.is_tensor for the port's values: TensorFlow tensors and Keras variables are tensors."""

import keras
import tensorflow as tf


def torch_is_tensor(obj):
    """torch.is_tensor(obj)."""
    return tf.is_tensor(obj) or isinstance(obj, (tf.Variable, keras.Variable))
