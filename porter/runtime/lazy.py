"""torch.nn.LazyLinear / LazyConv1d-3d / LazyBatchNorm1d-3d: the input's last axis (channels-last inside the port)
gives in_features / in_channels / num_features at the first call, as in torch; until then the layer has no weights,
so a model holding one is called once on a sample input before `load_state_dict`."""

import tensorflow as tf

from porter.runtime.base import TorchLayer
from porter.runtime.conv import _ConvNd
from porter.runtime.linear import Linear
from porter.runtime.norm import _BatchNormBase


def _unmade():
    """What a lazy layer's parameters hold before its first call: torch's uninitialised parameter reads as an empty
    tensor, so an init in __init__ (`net.weight.data.normal_(0, 0.01)`) does nothing, as in torch."""
    return tf.zeros((0,))


class _LazyWeights:
    """Weights made by `make_weights(input's last dim)` in Keras's build, i.e. at the first call."""

    def build(self, input_shape):
        if not getattr(self, "_lazy_made", False):
            self._lazy_made = True
            self.make_weights(int(input_shape[-1]))
        self.built = True

    def torch_state(self, prefix=""):
        if not getattr(self, "_lazy_made", False):
            raise ValueError(f"{prefix or type(self).__name__}: a lazy layer ({type(self).__name__}) has no weights "
                             f"before its first call: call the model once on a sample input, then load_state_dict")
        return super().torch_state(prefix)


class LazyLinear(_LazyWeights, Linear):
    """torch.nn.LazyLinear(out_features, bias=True)."""

    def runs_in(self, layout):
        """Torch's order only: the input's last axis gives `in_features` at the first call."""
        return layout == "source"

    def __init__(self, out_features, bias=True, device=None, dtype=None, **kwargs):
        TorchLayer.__init__(self, **kwargs)
        self.in_features, self.out_features, self.use_bias = 0, out_features, bias
        self.weight, self.bias = _unmade(), _unmade() if bias else None

    def get_config(self):
        return {**TorchLayer.get_config(self), "out_features": self.out_features, "bias": self.use_bias}


class _LazyConvNd(_LazyWeights, _ConvNd):
    """torch's LazyConvNd(out_channels, kernel_size, ...): channels-last only (the channel count is the input's
    last axis)."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None, **kwargs):
        super().__init__(None, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         **kwargs)
        self.weight, self.bias = _unmade(), _unmade() if bias else None

    def runs_in(self, layout):
        return layout == "channels_last"

    def get_config(self):
        config = {**super().get_config()}
        config.pop("in_channels", None)
        return config


class LazyConv1d(_LazyConvNd):
    _conv_rank = 1


class LazyConv2d(_LazyConvNd):
    _conv_rank = 2


class LazyConv3d(_LazyConvNd):
    _conv_rank = 3


class _LazyBatchNorm(_LazyWeights, _BatchNormBase):
    """torch's LazyBatchNormNd(eps, momentum, affine, track_running_stats)."""

    def __init__(self, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None,
                 **kwargs):
        TorchLayer.__init__(self, **kwargs)
        self.num_features, self.eps, self.momentum = 0, eps, momentum
        self.affine, self.track_running_stats, self.use_bias = affine, track_running_stats, True
        self.weight, self.bias = (_unmade(), _unmade()) if affine else (None, None)
        self.running_mean, self.running_var = (_unmade(), _unmade()) if track_running_stats else (None, None)
        self.num_batches_tracked = None

    def get_config(self):
        config = super().get_config()
        config.pop("num_features", None)
        config.pop("bias", None)
        return config


class LazyBatchNorm1d(_LazyBatchNorm):
    _norm_ranks = (2, 3)


class LazyBatchNorm2d(_LazyBatchNorm):
    _norm_ranks = (4,)


class LazyBatchNorm3d(_LazyBatchNorm):
    _norm_ranks = (5,)
