"""gluon.nn.Conv1DTranspose / Conv2DTranspose as Keras layers on channels-last input, with Gluon's constructor
(`channels`, `kernel_size`, `strides`, `padding`, `output_padding`, `dilation`, `groups`, `activation`,
`use_bias`, `in_channels=0` deferred) and its `save_parameters` names.

mxnet's Deconvolution has torch's ConvTranspose semantics (output size (H - 1) * s - 2 p + d (k - 1) + output_padding
+ 1) and its weight layout (in_channels, channels / groups, k...), so the port runs porter's transposed convolution
and loads the weight with the same transform as torch's.
"""

import numpy as np
import tensorflow as tf

from porter.runtime.conv import (
    _conv_torch_to_hwio,
    _conv_transpose,
    _conv_transpose_is_native,
    _conv_transpose_torch_to_forward,
    _conv_tuple,
)
from porter.runtime.gluon_layers import _GluonConv
from porter.runtime.gluon_ops import gluon_activation


class _GluonConvTranspose(_GluonConv):
    """Gluon's convolution with a transposed kernel: its own output_padding, weight layout and forward."""

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0, dilation=1, groups=1,
                 layout=None, activation=None, use_bias=True, weight_initializer=None, bias_initializer="zeros",
                 in_channels=0, **kwargs):
        super().__init__(channels, kernel_size, strides=strides, padding=padding, dilation=dilation, groups=groups,
                         layout=layout, activation=activation, use_bias=use_bias, **kwargs)
        self.output_padding = _conv_tuple(output_padding, self._gluon_dims, "output_padding")
        self._gluon_native = _conv_transpose_is_native(groups, self.dilation)
        self.in_channels = in_channels
        if in_channels:
            self._gluon_create(in_channels)

    def _gluon_kernel(self):
        taps = int(np.prod(self.kernel_size))
        if self._gluon_native:
            shape = self.kernel_size + (self.channels, self.in_channels)
        else:
            shape = self.kernel_size + (self.in_channels // self.groups, self.channels)
        return shape, self.channels // self.groups * taps, self.in_channels * taps

    def _gluon_in_channels(self, weight_shape):
        return weight_shape[0]  # (I, O / groups, k...)

    def _gluon_weight_to_keras(self, weight):
        if self._gluon_native:
            return _conv_torch_to_hwio(weight)  # (I, O, k...) -> (k..., O, I)
        return _conv_transpose_torch_to_forward(weight, self.groups)

    def call(self, x):
        y = _conv_transpose(tf.convert_to_tensor(x), self.weight, self.bias, self.strides, self.padding,
                            self.output_padding, self.dilation, self.groups, self._gluon_native)
        return gluon_activation(y, self.activation_name) if self.activation_name else y

    def get_config(self):
        return {**super().get_config(), "output_padding": self.output_padding}


class GluonConv1DTranspose(_GluonConvTranspose):
    """gluon.nn.Conv1DTranspose on (N, W, C)."""

    _gluon_dims = 1
    _gluon_layouts = ("NCW",)


class GluonConv2DTranspose(_GluonConvTranspose):
    """gluon.nn.Conv2DTranspose on (N, H, W, C)."""
