"""MXNet's NumPy interface (`mxnet.np`, `mxnet.npx`, np.ndarray methods under `npx.set_np()`), for the operators
whose NumPy semantics differ from torch's: np.dot on N-D operands, float32 as the default dtype of creation
(`np.arange(5)`, `np.array([1, 2])`), np.split's sections, np.power of a Python base, `astype`,
and the np.random draws models make their scratch parameters with. The rest reuse the torch or Gluon runtime."""

import itertools

import numpy as np
import tensorflow as tf

_DEFAULT_FLOAT = tf.float32  # mxnet.np's default dtype (NumPy's is float64)


def np_dtype(dtype):
    """A tf dtype for what mxnet.np code passes as one: 'float32', `np.float32`, `np.int64`, a tensor's dtype,
    Python's `float`/`int`/`bool` (mxnet reads `float` as float64, `int` as int64)."""
    if dtype is None:
        return None
    if isinstance(dtype, tf.dtypes.DType):
        return dtype
    if dtype is float:
        return tf.float64
    if dtype is int:
        return tf.int64
    if dtype is bool:
        return tf.bool
    return tf.as_dtype(np.dtype(dtype))


def np_astype(x, dtype, copy=True):
    """ndarray.astype(dtype): a cast (booleans to numbers 0/1)."""
    return tf.cast(tf.convert_to_tensor(x), np_dtype(dtype))


def np_dot(a, b, out=None):
    """np.dot: scalars multiply; 1-D . 1-D is the inner product; otherwise the last axis of `a` is contracted with
    the last axis of a 1-D `b` or the second-to-last axis of an N-D `b` (its other axes appended, in order)."""
    a, b = tf.convert_to_tensor(a), tf.convert_to_tensor(b)
    b = tf.cast(b, a.dtype)
    if a.shape.rank == 0 or b.shape.rank == 0:
        return a * b
    if b.shape.rank == 1:
        return tf.tensordot(a, b, axes=[[a.shape.rank - 1], [0]])
    if b.shape.rank == 2 and a.shape.rank >= 2:  # the usual weight matrix: one MatMul, no Transpose
        if a.shape.rank == 2:
            return tf.matmul(a, b)
        leading = tf.shape(a)[:-1]
        product = tf.matmul(tf.reshape(a, [-1, tf.shape(a)[-1]]), b)
        return tf.reshape(product, tf.concat([leading, tf.shape(b)[1:]], axis=0))
    return tf.tensordot(a, b, axes=[[a.shape.rank - 1], [b.shape.rank - 2]])


def np_power(x1, x2, out=None):
    """np.power(x1, x2): either may be a Python number (`np.power(10000, exponents)`); the tensor's dtype wins."""
    x1_tensor, x2_tensor = hasattr(x1, "dtype"), hasattr(x2, "dtype")
    if x1_tensor and not x2_tensor:
        x1 = tf.convert_to_tensor(x1)
        return tf.pow(x1, tf.cast(x2, x1.dtype))
    if x2_tensor and not x1_tensor:
        x2 = tf.convert_to_tensor(x2)
        dtype = x2.dtype if x2.dtype.is_floating or isinstance(x1, int) else _DEFAULT_FLOAT
        return tf.pow(tf.cast(x1, dtype), tf.cast(x2, dtype))
    x1, x2 = tf.convert_to_tensor(x1), tf.convert_to_tensor(x2)
    return tf.pow(x1, tf.cast(x2, x1.dtype))


def _shape(shape):
    return [int(shape)] if isinstance(shape, (int, np.integer)) else list(shape)


def np_zeros(shape, dtype=None, order="C", ctx=None, device=None):
    """np.zeros: float32 unless told."""
    return tf.zeros(_shape(shape), np_dtype(dtype) or _DEFAULT_FLOAT)


def np_ones(shape, dtype=None, order="C", ctx=None, device=None):
    """np.ones: float32 unless told."""
    return tf.ones(_shape(shape), np_dtype(dtype) or _DEFAULT_FLOAT)


def np_full(shape, fill_value, dtype=None, order="C", ctx=None, device=None, out=None):
    """np.full: float32 unless told (or a tensor fill value's dtype)."""
    dtype = np_dtype(dtype) or (fill_value.dtype if hasattr(fill_value, "dtype") else _DEFAULT_FLOAT)
    return tf.fill(_shape(shape), tf.cast(fill_value, dtype))


def np_arange(start, stop=None, step=1, dtype=None, ctx=None, device=None):
    """np.arange: float32 unless told (mxnet's default, integer bounds included)."""
    if stop is None:
        start, stop = 0, start
    dtype = np_dtype(dtype) or _DEFAULT_FLOAT
    return tf.cast(tf.range(start, stop, step, dtype=tf.float64 if dtype.is_floating else dtype), dtype)


def np_array(object, dtype=None, ctx=None, device=None):
    """np.array: a tensor's own dtype, else float32 unless told (mxnet's default for Python data)."""
    if dtype is not None:
        return tf.cast(tf.convert_to_tensor(object), np_dtype(dtype))
    if hasattr(object, "dtype"):
        return tf.convert_to_tensor(object)
    return tf.convert_to_tensor(np.asarray(object, dtype=np.float32))


def np_linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, ctx=None, device=None):
    """np.linspace: float32 unless told."""
    dtype = np_dtype(dtype) or _DEFAULT_FLOAT
    if endpoint:
        return tf.cast(tf.linspace(tf.cast(start, tf.float64), tf.cast(stop, tf.float64), num), dtype)
    step = (stop - start) / num
    return tf.cast(start + tf.range(num, dtype=tf.float64) * step, dtype)


def np_eye(N, M=None, k=0, dtype=None, ctx=None, device=None):
    """np.eye: ones on the k-th diagonal, float32 unless told."""
    columns = N if M is None else M
    rows = tf.range(N)[:, None]
    return tf.cast(tf.range(columns)[None, :] - rows == k, np_dtype(dtype) or _DEFAULT_FLOAT)


def np_split(ary, indices_or_sections, axis=0):
    """np.split: an int gives that many equal sections (refused when they do not divide the axis); a list gives the
    indices to cut at."""
    x = tf.convert_to_tensor(ary)
    if isinstance(indices_or_sections, (int, np.integer)):
        return tf.split(x, int(indices_or_sections), axis=axis)
    size = x.shape[axis]
    cuts = [0] + [int(i) for i in indices_or_sections] + [size]
    return [tf.gather(x, tf.range(lo, max(lo, hi)), axis=axis) for lo, hi in itertools.pairwise(cuts)]


def np_random_normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, device=None, out=None):
    """np.random.normal: a draw (not mxnet's numbers: random values are not reproduced across frameworks)."""
    shape = [] if size is None else _shape(size)
    return tf.random.normal(shape, loc, scale, dtype=np_dtype(dtype) or _DEFAULT_FLOAT)


def np_random_uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, device=None, out=None):
    """np.random.uniform: a draw in [low, high)."""
    shape = [] if size is None else _shape(size)
    return tf.random.uniform(shape, low, high, dtype=np_dtype(dtype) or _DEFAULT_FLOAT)


def np_random_randn(*size, **kwargs):
    """np.random.randn(d0, d1, ...): standard normal draws."""
    return tf.random.normal(list(size), dtype=np_dtype(kwargs.get("dtype")) or _DEFAULT_FLOAT)


def np_random_rand(*size, **kwargs):
    """np.random.rand(d0, d1, ...): uniform draws in [0, 1)."""
    return tf.random.uniform(list(size), dtype=np_dtype(kwargs.get("dtype")) or _DEFAULT_FLOAT)


def np_zeros_like(a, dtype=None, order="C", ctx=None, out=None):
    """np.zeros_like: `a`'s shape and (unless told) dtype."""
    a = tf.convert_to_tensor(a)
    return tf.zeros(tf.shape(a), np_dtype(dtype) or a.dtype)


def np_ones_like(a, dtype=None, order="C", ctx=None, out=None):
    """np.ones_like: `a`'s shape and (unless told) dtype."""
    a = tf.convert_to_tensor(a)
    return tf.ones(tf.shape(a), np_dtype(dtype) or a.dtype)


def np_full_like(a, fill_value, dtype=None, order="C", ctx=None, out=None):
    """np.full_like: `a`'s shape and (unless told) dtype, every entry `fill_value`."""
    a = tf.convert_to_tensor(a)
    dtype = np_dtype(dtype) or a.dtype
    return tf.fill(tf.shape(a), tf.cast(fill_value, dtype))


def np_tile(A, reps):
    """np.tile: `reps` shorter than A's rank repeats the trailing axes; longer, A gains leading axes of size 1."""
    x = tf.convert_to_tensor(A)
    reps = [int(reps)] if isinstance(reps, (int, np.integer)) else [int(r) for r in reps]
    rank = x.shape.rank
    if len(reps) > rank:
        x = tf.reshape(x, tf.concat([tf.ones([len(reps) - rank], tf.int32), tf.shape(x)], axis=0))
    reps = [1] * (x.shape.rank - len(reps)) + reps
    return tf.tile(x, reps)


def np_broadcast_to(array, shape):
    """np.broadcast_to."""
    return tf.broadcast_to(tf.convert_to_tensor(array), _shape(shape))


def _axes(axis, rank):
    return list(range(rank)) if axis is None else [axis] if isinstance(axis, (int, np.integer)) else list(axis)


def np_flip(m, axis=None):
    """np.flip: along `axis` (every axis when None)."""
    x = tf.convert_to_tensor(m)
    return tf.reverse(x, _axes(axis, x.shape.rank))


def np_cumsum(a, axis=None, dtype=None, out=None):
    """np.cumsum: of the flattened array when `axis` is None."""
    x = tf.convert_to_tensor(a)
    if dtype is not None:
        x = tf.cast(x, np_dtype(dtype))
    return tf.cumsum(tf.reshape(x, [-1]) if axis is None else x, axis=0 if axis is None else axis)


def np_roll(a, shift, axis=None):
    """np.roll: of the flattened array (shape kept) when `axis` is None."""
    x = tf.convert_to_tensor(a)
    if axis is None:
        return tf.reshape(tf.roll(tf.reshape(x, [-1]), shift, axis=0), tf.shape(x))
    return tf.roll(x, shift, axis=axis)


def np_take(a, indices, axis=None, mode="raise", out=None):
    """np.take: entries of the flattened array (or along `axis`) at `indices` (mxnet clips out-of-range indices
    unless told to wrap)."""
    x = tf.convert_to_tensor(a)
    if axis is None:
        x, axis = tf.reshape(x, [-1]), 0
    size = tf.shape(x)[axis]
    indices = tf.cast(tf.convert_to_tensor(indices), tf.int64)
    size = tf.cast(size, tf.int64)
    indices = tf.math.floormod(indices, size) if mode == "wrap" else tf.clip_by_value(indices, 0, size - 1)
    return tf.gather(x, indices, axis=axis)


def np_sort(a, axis=-1):
    """np.sort: ascending along `axis` (of the flattened array when None)."""
    x = tf.convert_to_tensor(a)
    return tf.sort(tf.reshape(x, [-1]) if axis is None else x, axis=0 if axis is None else axis)


def np_argsort(a, axis=-1):
    """np.argsort: int64 indices that sort `a` ascending (stable)."""
    x = tf.convert_to_tensor(a)
    flat = axis is None
    order = tf.argsort(tf.reshape(x, [-1]) if flat else x, axis=0 if flat else axis, stable=True)
    return tf.cast(order, tf.int64)


def np_meshgrid(*xi, indexing="xy", **kwargs):
    """np.meshgrid: 'xy' (Cartesian, NumPy's default) or 'ij' indexing."""
    return tf.meshgrid(*[tf.convert_to_tensor(x) for x in xi], indexing=indexing)
