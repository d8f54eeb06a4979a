"""Gluon's parametric and extra activation layers (`gluon.nn.PReLU`, `ELU`, `SELU`, `GELU`, `Swish`) and the
initializer `mx.init.Constant` that PReLU's `alpha_initializer` takes."""

import keras
import tensorflow as tf

from porter.runtime.activation import elu, gelu, selu
from porter.runtime.base import StateEntry, TorchLayer
from porter.runtime.gluon_layers import _gluon_keras_kwargs


def GluonConstant(value):  # noqa: N802 - named as mxnet names it (`mx.init.Constant(0.2)`)
    """mx.init.Constant(value) as a Keras initializer."""
    return keras.initializers.Constant(value)


class GluonPReLU(TorchLayer):
    """gluon.nn.PReLU: x if x >= 0 else alpha * x, `alpha` of shape (in_channels,) on the channel axis (last here),
    saved as `alpha`."""

    porter_layout = "channels_last"

    def __init__(self, alpha_initializer=None, in_channels=1, **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        self.in_channels = in_channels
        initializer = alpha_initializer if alpha_initializer is not None else keras.initializers.Constant(0.25)
        self.alpha = self.add_weight(shape=(in_channels,), initializer=initializer, name="alpha")
        self.finish_init()

    def call(self, x):
        x = tf.convert_to_tensor(x)
        return tf.where(x >= 0, x, x * tf.cast(self.alpha, x.dtype))

    def torch_state(self, prefix=""):
        return [StateEntry(prefix + "alpha", self.alpha)]

    def get_config(self):
        return {**super().get_config(), "in_channels": self.in_channels}


class _GluonElementwise(TorchLayer):
    porter_layout = "any"

    def __init__(self, **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        self.finish_init()


class GluonELU(_GluonElementwise):
    """gluon.nn.ELU(alpha=1.0)."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha

    def call(self, x):
        return elu(x, self.alpha)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class GluonSELU(_GluonElementwise):
    """gluon.nn.SELU."""

    def call(self, x):
        return selu(x)


class GluonGELU(_GluonElementwise):
    """gluon.nn.GELU: the exact (erf) form mxnet 1.9.1 computes."""

    def call(self, x):
        return gelu(x)


class GluonSwish(_GluonElementwise):
    """gluon.nn.Swish(beta=1.0): x * sigmoid(beta * x)."""

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self.beta = beta

    def call(self, x):
        x = tf.convert_to_tensor(x)
        return x * tf.math.sigmoid(tf.cast(self.beta, x.dtype) * x)

    def get_config(self):
        return {**super().get_config(), "beta": self.beta}
