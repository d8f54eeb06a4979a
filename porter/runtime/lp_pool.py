"""torch's power-average pooling (`F.lp_pool1d/2d/3d`, `nn.LPPool1d/2d/3d`) on channels-last tensors.

As torch computes it: the average pool of `x ** p` over windows without padding, times the window size, to the power
`1 / p`, with torch's `sign(out) * relu(|out|)` in between (a window sum that rounds below zero stays so)."""

import numpy as np
import tensorflow as tf

from porter.runtime.base import TorchLayer
from porter.runtime.pool import _pool_avg, _pool_tuple


def _pool_lp(x, dims, norm_type, kernel_size, stride, ceil_mode, what):
    x = tf.convert_to_tensor(x)
    kernel = _pool_tuple(kernel_size, dims, "kernel_size")
    stride = kernel if stride is None else stride
    power = tf.cast(norm_type, x.dtype)
    out = _pool_avg(tf.pow(x, power), dims, kernel, stride, 0, ceil_mode, True, None, what)
    window = tf.cast(float(np.prod(kernel)), x.dtype)
    return tf.pow(tf.sign(out) * tf.nn.relu(tf.abs(out)) * window, 1.0 / power)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _pool_lp(input, 1, norm_type, kernel_size, stride, ceil_mode, "lp_pool1d")


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _pool_lp(input, 2, norm_type, kernel_size, stride, ceil_mode, "lp_pool2d")


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _pool_lp(input, 3, norm_type, kernel_size, stride, ceil_mode, "lp_pool3d")


class _PoolLpNd(TorchLayer):
    porter_layout = "channels_last"
    _pool_dims = 2

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False, **kwargs):
        super().__init__(**kwargs)
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode
        self.finish_init()

    def call(self, x):
        return _pool_lp(x, self._pool_dims, self.norm_type, self.kernel_size, self.stride, self.ceil_mode,
                        type(self).__name__)

    def get_config(self):
        return {**super().get_config(), "norm_type": self.norm_type, "kernel_size": self.kernel_size,
                "stride": self.stride, "ceil_mode": self.ceil_mode}


class LPPool1d(_PoolLpNd):
    """torch.nn.LPPool1d on (N, L, C)."""

    _pool_dims = 1


class LPPool2d(_PoolLpNd):
    """torch.nn.LPPool2d on (N, H, W, C)."""

    _pool_dims = 2


class LPPool3d(_PoolLpNd):
    """torch.nn.LPPool3d on (N, D, H, W, C)."""

    _pool_dims = 3
