"""gluon.nn.Conv1DTranspose / Conv2DTranspose as Keras layers on channels-last input, with Gluon's constructor
(`channels`, `kernel_size`, `strides`, `padding`, `output_padding`, `dilation`, `groups`, `activation`,
`use_bias`, `in_channels=0` deferred) and its `save_parameters` names.

mxnet's Deconvolution has torch's ConvTranspose semantics (output size (H - 1) * s - 2 p + d (k - 1) + output_padding
+ 1) and its weight layout (in_channels, channels / groups, k...), so the port runs porter's transposed convolution
and loads the weight with the same transform as torch's.
"""

import numpy as np
import tensorflow as tf

from porter.runtime.base import StateEntry, TorchLayer
from porter.runtime.conv import (
    _conv_torch_to_hwio,
    _conv_transpose,
    _conv_transpose_is_native,
    _conv_transpose_torch_to_forward,
    _conv_tuple,
)
from porter.runtime.gluon_layers import _gluon_deferred_state, _gluon_keras_kwargs, _gluon_xavier
from porter.runtime.gluon_ops import gluon_activation


class _GluonConvTranspose(TorchLayer):
    porter_layout = "channels_last"
    _gluon_dims = 2
    _gluon_layouts = ("NCHW",)

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0, dilation=1, groups=1,
                 layout=None, activation=None, use_bias=True, weight_initializer=None, bias_initializer="zeros",
                 in_channels=0, **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        n = self._gluon_dims
        if layout is not None and layout not in self._gluon_layouts:
            raise NotImplementedError(f"{type(self).__name__}: layout={layout!r} is not supported by porter yet "
                                      f"(only {self._gluon_layouts[0]})")
        self.channels, self.groups, self.activation_name, self.use_bias = channels, groups, activation, use_bias
        self.kernel_size = _conv_tuple(kernel_size, n, "kernel_size")
        self.strides = _conv_tuple(strides, n, "strides")
        self.padding = _conv_tuple(padding, n, "padding")
        self.output_padding = _conv_tuple(output_padding, n, "output_padding")
        self.dilation = _conv_tuple(dilation, n, "dilation")
        self._gluon_native = _conv_transpose_is_native(groups, self.dilation)
        self.in_channels = in_channels
        self.weight = self.bias = None
        if in_channels:
            self._gluon_create(in_channels)

    def _gluon_create(self, in_channels):
        self.in_channels = int(in_channels)
        if self.in_channels % self.groups or self.channels % self.groups:
            raise ValueError("in_channels and channels must be divisible by groups")
        taps = int(np.prod(self.kernel_size))
        init = _gluon_xavier(None, self.channels // self.groups * taps, self.in_channels * taps)
        if self._gluon_native:
            shape = self.kernel_size + (self.channels, self.in_channels)
        else:
            shape = self.kernel_size + (self.in_channels // self.groups, self.channels)
        self.weight = self.add_weight(shape=shape, initializer=init, name="weight")
        if self.use_bias:
            self.bias = self.add_weight(shape=(self.channels,), initializer="zeros", name="bias")
        self.built = True

    def build(self, input_shape):
        if self.weight is None:
            self._gluon_create(input_shape[-1])
        self.built = True

    @property
    def out_channels(self):  # what porter's channel bookkeeping reads
        return self.channels

    def _gluon_weight_to_keras(self, weight):
        if self._gluon_native:
            return _conv_torch_to_hwio(weight)  # (I, O, k...) -> (k..., O, I)
        return _conv_transpose_torch_to_forward(weight, self.groups)

    def call(self, x):
        y = _conv_transpose(tf.convert_to_tensor(x), self.weight, self.bias, self.strides, self.padding,
                            self.output_padding, self.dilation, self.groups, self._gluon_native)
        return gluon_activation(y, self.activation_name) if self.activation_name else y

    def torch_state(self, prefix=""):
        names = ("weight", "bias") if self.use_bias else ("weight",)
        if self.weight is None:
            return _gluon_deferred_state(self, prefix, names, lambda shape: self._gluon_create(shape[0]),
                                         self._gluon_weight_to_keras)
        entries = [StateEntry(prefix + "weight", self.weight, self._gluon_weight_to_keras)]
        if self.bias is not None:
            entries.append(StateEntry(prefix + "bias", self.bias))
        return entries

    def get_config(self):
        return {**super().get_config(), "channels": self.channels, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "output_padding": self.output_padding,
                "dilation": self.dilation, "groups": self.groups, "activation": self.activation_name,
                "use_bias": self.use_bias, "in_channels": self.in_channels}


class GluonConv1DTranspose(_GluonConvTranspose):
    """gluon.nn.Conv1DTranspose on (N, W, C)."""

    _gluon_dims = 1
    _gluon_layouts = ("NCW",)


class GluonConv2DTranspose(_GluonConvTranspose):
    """gluon.nn.Conv2DTranspose on (N, H, W, C)."""
