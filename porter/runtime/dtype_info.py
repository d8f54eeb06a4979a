"""torch.finfo / torch.iinfo for TensorFlow dtypes: the limits of a float or integer type (max, min, eps, tiny,
bits, resolution), as torch reports them, read from numpy's (ml_dtypes' for bfloat16)."""

import numpy as np
import tensorflow as tf


class TorchTypeInfo:
    """The attributes torch.finfo / torch.iinfo offer (`dtype` is the TensorFlow dtype)."""

    def __init__(self, info, dtype, floating):
        self.dtype, self.bits = dtype, int(info.bits)
        self.max, self.min = (float(info.max), float(info.min)) if floating else (int(info.max), int(info.min))
        if floating:
            self.eps, self.tiny, self.resolution = float(info.eps), float(info.tiny), 10.0 ** -int(info.precision)
            self.smallest_normal = self.tiny


def _numpy_info(dtype, floating):
    dtype = tf.as_dtype(dtype if dtype is not None else tf.float32)
    numpy_type = dtype.as_numpy_dtype
    if dtype == tf.bfloat16:
        import ml_dtypes

        return ml_dtypes.finfo(numpy_type), dtype
    return (np.finfo(numpy_type) if floating else np.iinfo(numpy_type)), dtype


def finfo(type=None):
    """torch.finfo(dtype): limits of a floating dtype (float32 when none is given)."""
    info, dtype = _numpy_info(type, True)
    return TorchTypeInfo(info, dtype, True)


def iinfo(type):
    """torch.iinfo(dtype): limits of an integer dtype."""
    info, dtype = _numpy_info(type, False)
    return TorchTypeInfo(info, dtype, False)
