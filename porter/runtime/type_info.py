"""torch.finfo / torch.iinfo: the numeric limits of a dtype (`torch.finfo(x.dtype).eps`, `torch.finfo().max`), as
Python numbers like torch gives them, read from numpy's tables (TensorFlow's numpy API adds bfloat16)."""

import numpy as np
import tensorflow as tf


class TypeInfo:
    """The attributes torch.finfo / torch.iinfo have, as Python floats or ints."""

    def __init__(self, info, names, dtype):
        for name in names:  # resolution as torch gives it: 10 ** -precision exactly, not rounded to the dtype
            value = 10.0 ** -info.precision if name == "resolution" else getattr(info, name)
            setattr(self, name, int(value) if name == "bits" or isinstance(value, (int, np.integer)) else
                    float(value))
        self.dtype = dtype

    def __repr__(self):
        return f"{type(self).__name__}({vars(self)})"


def _numpy_dtype(dtype):
    if dtype is None:  # torch.finfo(): the default float dtype
        return np.dtype(np.float32)
    return np.dtype(tf.as_dtype(dtype).as_numpy_dtype)


def finfo(type=None):
    numpy_dtype = _numpy_dtype(type)
    return TypeInfo(tf.experimental.numpy.finfo(numpy_dtype), ("bits", "eps", "max", "min", "tiny", "smallest_normal",
                                                   "resolution"), numpy_dtype.name)


def iinfo(type):
    numpy_dtype = _numpy_dtype(type)
    return TypeInfo(np.iinfo(numpy_dtype), ("bits", "max", "min"), numpy_dtype.name)


def dtype_property(dtype, name):
    """torch.dtype's `is_floating_point`, `is_signed`, `is_complex` and `itemsize` of a TensorFlow DType (or anything
    tf.as_dtype reads: a numpy dtype, a name); any other object's attribute as it has it."""
    try:
        dtype = tf.as_dtype(dtype)
    except TypeError:
        return getattr(dtype, name)
    if name == "is_floating_point":
        return dtype.is_floating
    if name == "is_signed":  # torch: floats and complex are signed; bool and unsigned ints are not
        return not (dtype.is_unsigned or dtype.is_bool)
    if name == "itemsize":
        return dtype.size
    return getattr(dtype, name)
