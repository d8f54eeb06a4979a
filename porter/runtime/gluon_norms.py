"""Gluon's per-sample normalisation layers (`gluon.nn.LayerNorm`, `InstanceNorm`, `GroupNorm`) as Keras layers with
mxnet 1.9.1's semantics and `save_parameters` names (`gamma`, `beta`).

- LayerNorm(axis=-1) normalises one axis. With the default (the last axis) it runs in Gluon's own order, so a
  sequence model traces no Transpose; with another literal axis (`axis=1`: the channels of an image) the translator
  picks GluonLayerNormChannelsLast, which runs channels-last with the axis remapped.
- InstanceNorm(axis=1) normalises every spatial position of one sample and channel; GroupNorm(num_groups) the
  channels of each group with the spatial positions, and its `gamma`/`beta` have one value per *group*
  (shape (num_groups,)), as mxnet 1.x stores them. Both run channels-last.
Gluon applies `gamma`/`beta` whatever `scale`/`center` say (they only freeze them), and so does the port.
`in_channels=0` (the default) defers the parameters to the first call or to `load_state_dict`.
"""

import tensorflow as tf

from porter.runtime.base import StateEntry, TorchLayer
from porter.runtime.gluon_containers import gluon_channels_last_axis
from porter.runtime.gluon_layers import _gluon_deferred_state, _gluon_keras_kwargs
from porter.runtime.norm import _norm_group_forward, _norm_moments, _norm_prepare


class _GluonAffineNorm(TorchLayer):
    """Shared parameters: `gamma` (ones) and `beta` (zeros) of size `in_channels`, created when it is known."""

    def __init__(self, epsilon=1e-5, center=True, scale=True, beta_initializer="zeros", gamma_initializer="ones",
                 in_channels=0, **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        self.epsilon, self.center, self.scale, self.in_channels = epsilon, center, scale, in_channels
        self.gamma = self.beta = None
        if in_channels:
            self._gluon_create(in_channels)

    def _gluon_create(self, size):
        self.in_channels = int(size)
        self.gamma = self.add_weight(shape=(self.in_channels,), initializer="ones", name="gamma",
                                     trainable=self.scale, autocast=False)
        self.beta = self.add_weight(shape=(self.in_channels,), initializer="zeros", name="beta",
                                    trainable=self.center, autocast=False)
        self.built = True

    def _gluon_parameter_size(self, input_shape):
        raise NotImplementedError

    def build(self, input_shape):
        if self.gamma is None:
            self._gluon_create(self._gluon_parameter_size(list(input_shape)))
        self.built = True

    def torch_state(self, prefix=""):
        if self.gamma is None:
            return _gluon_deferred_state(self, prefix, ("gamma", "beta"), lambda shape: self._gluon_create(shape[0]))
        return [StateEntry(prefix + "gamma", self.gamma), StateEntry(prefix + "beta", self.beta)]

    def get_config(self):
        return {**super().get_config(), "epsilon": self.epsilon, "center": self.center, "scale": self.scale,
                "in_channels": self.in_channels}


def _gluon_normalised(x, axes, gamma, beta, epsilon, parameter_axis):
    """(x - mean) / sqrt(var + epsilon) over `axes`, then gamma/beta along `parameter_axis`."""
    x, out_dtype = _norm_prepare(x)
    _mean, var, centered = _norm_moments(x, axes)
    y = centered * tf.math.rsqrt(var + tf.cast(epsilon, x.dtype))
    shape = [1] * len(x.shape)
    shape[parameter_axis] = -1
    y = y * tf.reshape(tf.cast(gamma, y.dtype), shape) + tf.reshape(tf.cast(beta, y.dtype), shape)
    return tf.cast(y, out_dtype)


class GluonLayerNorm(_GluonAffineNorm):
    """gluon.nn.LayerNorm(axis=-1, epsilon=1e-5): normalises `axis` of a tensor in Gluon's own order."""

    porter_layout = "source"

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", in_channels=0, **kwargs):
        self.axis = axis
        super().__init__(epsilon, center, scale, beta_initializer, gamma_initializer, in_channels, **kwargs)

    def _gluon_axis(self, rank):
        return self.axis % rank

    def _gluon_parameter_size(self, input_shape):
        return input_shape[self._gluon_axis(len(input_shape))]

    def call(self, x):
        x = tf.convert_to_tensor(x)
        axis = self._gluon_axis(len(x.shape))
        return _gluon_normalised(x, [axis], self.gamma, self.beta, self.epsilon, axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class GluonLayerNormChannelsLast(GluonLayerNorm):
    """gluon.nn.LayerNorm with a literal axis other than the last (`axis=1`, an image's channels) on a
    channels-last tensor: the same normalisation, its axis remapped."""

    porter_layout = "channels_last"

    def _gluon_axis(self, rank):
        return gluon_channels_last_axis(self.axis, rank)


class GluonInstanceNorm(_GluonAffineNorm):
    """gluon.nn.InstanceNorm(axis=1, epsilon=1e-5) on channels-last (N, *S, C): each sample and channel normalised
    over its spatial positions."""

    porter_layout = "channels_last"

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False, beta_initializer="zeros",
                 gamma_initializer="ones", in_channels=0, **kwargs):
        if axis != 1:
            raise NotImplementedError(f"GluonInstanceNorm: axis={axis} is not supported by porter yet (only 1)")
        self.axis = axis
        super().__init__(epsilon, center, scale, beta_initializer, gamma_initializer, in_channels, **kwargs)

    def _gluon_parameter_size(self, input_shape):
        return input_shape[-1]

    def call(self, x):
        x = tf.convert_to_tensor(x)
        rank = len(x.shape)
        return _gluon_normalised(x, list(range(1, rank - 1)), self.gamma, self.beta, self.epsilon, rank - 1)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class GluonGroupNorm(TorchLayer):
    """gluon.nn.GroupNorm(num_groups=1, epsilon=1e-5) on channels-last (N, *S, C); `gamma`/`beta` hold one value
    per group (mxnet 1.x), applied to every channel of the group."""

    porter_layout = "channels_last"

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        self.num_groups, self.epsilon, self.center, self.scale = num_groups, epsilon, center, scale
        self.gamma = self.add_weight(shape=(num_groups,), initializer="ones", name="gamma", trainable=scale,
                                     autocast=False)
        self.beta = self.add_weight(shape=(num_groups,), initializer="zeros", name="beta", trainable=center,
                                    autocast=False)
        self.finish_init()

    def call(self, x):
        x = tf.convert_to_tensor(x)
        per_group = x.shape[-1] // self.num_groups
        gamma = tf.repeat(tf.convert_to_tensor(self.gamma), per_group)
        beta = tf.repeat(tf.convert_to_tensor(self.beta), per_group)
        return _norm_group_forward(x, self.num_groups, gamma, beta, self.epsilon)

    def torch_state(self, prefix=""):
        return [StateEntry(prefix + "gamma", self.gamma), StateEntry(prefix + "beta", self.beta)]

    def get_config(self):
        return {**super().get_config(), "num_groups": self.num_groups, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale}
