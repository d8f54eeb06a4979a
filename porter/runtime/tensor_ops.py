"""torch tensor functions and methods on TensorFlow tensors, in torch's axis order, with torch's signatures."""

import collections
import numbers

import numpy as np
import tensorflow as tf

from porter.runtime.base import channels_first_perm, permute_axes

DTYPES = {"float32": tf.float32, "float": tf.float32, "float64": tf.float64, "double": tf.float64,
          "float16": tf.float16, "half": tf.float16, "bfloat16": tf.bfloat16, "int64": tf.int64,
          "long": tf.int64, "int32": tf.int32, "int": tf.int32, "bool": tf.bool, "uint8": tf.uint8,
          "int8": tf.int8, "int16": tf.int16}


def _shape_args(shape):
    """torch accepts view(2, 3) and view((2, 3)); sizes may be ints or scalar tensors."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    elif len(shape) == 1 and hasattr(shape[0], "shape") and len(shape[0].shape) == 1:
        return shape[0]
    return [s if not hasattr(s, "dtype") else tf.cast(s, tf.int32) for s in shape]


def _as_dtype(dtype):
    if dtype is None:
        return None
    if isinstance(dtype, str):
        return DTYPES[dtype.replace("torch.", "")]
    return tf.as_dtype(dtype)


def view(input, *shape):
    """Tensor.view / reshape (also torch.reshape(input, shape))."""
    return tf.reshape(input, _shape_args(shape))


def view_as(input, other):
    return tf.reshape(input, tf.shape(other))


def flatten(input, start_dim=0, end_dim=-1):
    rank = len(input.shape)
    if rank == 0:
        return tf.reshape(input, [1])
    start = start_dim % rank
    end = end_dim % rank
    if start >= end:
        return input
    sizes = [input.shape[i] if input.shape[i] is not None else tf.shape(input)[i] for i in range(rank)]
    middle = input.shape[start:end + 1]
    merged = int(np.prod(middle)) if None not in middle else -1
    new_shape = sizes[:start] + [merged] + sizes[end + 1:]
    if merged != -1 and sum(1 for s in new_shape if not isinstance(s, int)) == 1 and start > 0:
        new_shape = [s if isinstance(s, int) else -1 for s in new_shape]
    return tf.reshape(input, new_shape)


def unflatten(input, dim, sizes):
    rank = len(input.shape)
    dim = dim % rank
    shape = [input.shape[i] if input.shape[i] is not None else tf.shape(input)[i] for i in range(rank)]
    return tf.reshape(input, shape[:dim] + list(sizes) + shape[dim + 1:])


def permute(input, *dims):
    return tf.transpose(input, _shape_args(dims))


def transpose(input, dim0, dim1, channels_last=False):
    """torch's transpose; `channels_last`: `input` is held channels-last (its rank read here), the result in torch's
    order: one permutation for both moves, none when the transpose only undoes the channels-last order (a (N, L, C)
    sequence held (N, C, L) given `transpose(1, 2)`)."""
    rank = len(input.shape)
    perm = list(range(rank))
    perm[dim0 % rank], perm[dim1 % rank] = perm[dim1 % rank], perm[dim0 % rank]
    if channels_last and rank > 2:
        to_torch = channels_first_perm(rank)
        return permute_axes(input, [to_torch[d] for d in perm])
    return tf.transpose(input, perm)


def matrix_t(input):
    return input if len(input.shape) < 2 else tf.transpose(input)


def squeeze(input, dim=None):
    if dim is None:
        return tf.squeeze(input)
    dims = [dim] if isinstance(dim, int) else list(dim)
    dims = [d % len(input.shape) for d in dims if input.shape[d] == 1]
    return tf.squeeze(input, dims) if dims else input


def unsqueeze(input, dim):
    return tf.expand_dims(input, dim if dim >= 0 else dim + len(input.shape) + 1)


def cat(tensors, dim=0):
    tensors = [t for t in tensors if not (len(t.shape) == 1 and t.shape[0] == 0)]
    return tf.concat(tensors, axis=dim)


def stack(tensors, dim=0):
    return tf.stack(list(tensors), axis=dim)


def split(tensor, split_size_or_sections, dim=0):
    size = tensor.shape[dim]
    if isinstance(split_size_or_sections, int):
        sections = [split_size_or_sections] * (size // split_size_or_sections)
        if size % split_size_or_sections:
            sections.append(size % split_size_or_sections)
    else:
        sections = list(split_size_or_sections)
    return tuple(tf.split(tensor, sections, axis=dim))


def chunk(input, chunks, dim=0):
    size = input.shape[dim]
    step = -(-size // chunks)
    return split(input, step, dim)


def unbind(input, dim=0):
    return tuple(tf.unstack(input, axis=dim))


def expand(input, *sizes):
    sizes = _shape_args(sizes)
    rank = len(sizes) if isinstance(sizes, list) else sizes.shape[0]
    input = tf.reshape(input, [1] * (rank - len(input.shape)) + [-1 if s is None else s for s in input.shape]) \
        if rank > len(input.shape) and None not in input.shape else input
    target = [tf.shape(input)[i] if isinstance(s, int) and s == -1 else s for i, s in enumerate(sizes)]
    return tf.broadcast_to(input, target)


def expand_as(input, other):
    return tf.broadcast_to(input, tf.shape(other))


def repeat(input, *sizes):
    sizes = _shape_args(sizes)
    extra = len(sizes) - len(input.shape)
    if extra > 0:
        input = tf.reshape(input, [1] * extra + [-1 if s is None else s for s in input.shape])
    return tf.tile(input, sizes)


def repeat_interleave(input, repeats, dim=None, output_size=None):
    if dim is None:
        input = tf.reshape(input, [-1])
        dim = 0
    return tf.repeat(input, repeats, axis=dim)


def matmul(input, other):
    return tf.matmul(input, other) if len(input.shape) > 1 and len(other.shape) > 1 else tf.tensordot(
        input, other, axes=[[len(input.shape) - 1], [0 if len(other.shape) == 1 else len(other.shape) - 2]])


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return tf.einsum(equation, *operands)


def _reduce(function, input, dim, keepdim):
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return function(input, axis=None, keepdims=keepdim)
    return function(input, axis=list(dim) if isinstance(dim, (tuple, list)) else dim, keepdims=keepdim)


def torch_sum(input, dim=None, keepdim=False, dtype=None):
    if input.dtype == tf.bool:
        input = tf.cast(input, tf.int64)
    return _reduce(tf.reduce_sum, input if dtype is None else tf.cast(input, _as_dtype(dtype)), dim, keepdim)


def mean(input, dim=None, keepdim=False, dtype=None):
    return _reduce(tf.reduce_mean, input if dtype is None else tf.cast(input, _as_dtype(dtype)), dim, keepdim)


def prod(input, dim=None, keepdim=False, dtype=None):
    return _reduce(tf.reduce_prod, input, dim, keepdim)


def torch_all(input, dim=None, keepdim=False, dtype=None):
    """torch.all / Tensor.all: True where every element (along `dim`) is non-zero."""
    return _reduce(tf.reduce_all, tf.cast(input, tf.bool), dim, keepdim)


def torch_any(input, dim=None, keepdim=False, dtype=None):
    """torch.any / Tensor.any: True where some element (along `dim`) is non-zero."""
    return _reduce(tf.reduce_any, tf.cast(input, tf.bool), dim, keepdim)


def amax(input, dim=(), keepdim=False):
    return _reduce(tf.reduce_max, input, dim, keepdim)


def amin(input, dim=(), keepdim=False):
    return _reduce(tf.reduce_min, input, dim, keepdim)


def logsumexp(input, dim, keepdim=False):
    return _reduce(tf.reduce_logsumexp, input, dim, keepdim)


def var(input, dim=None, unbiased=True, keepdim=False, correction=None):
    correction = (1 if unbiased else 0) if correction is None else correction
    mean_value = _reduce(tf.reduce_mean, input, dim, True)
    squared = _reduce(tf.reduce_sum, tf.square(input - mean_value), dim, keepdim)
    count = tf.cast(tf.size(input) // tf.maximum(tf.size(squared), 1), input.dtype) if dim is not None else \
        tf.cast(tf.size(input), input.dtype)
    return squared / (count - correction)


def std(input, dim=None, unbiased=True, keepdim=False, correction=None):
    return tf.sqrt(var(input, dim, unbiased, keepdim, correction))


def var_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """torch.var_mean: (variance, mean) over `dim`."""
    return var(input, dim, unbiased, keepdim, correction), _reduce(tf.reduce_mean, input, dim, keepdim)


def std_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """torch.std_mean: (standard deviation, mean) over `dim`."""
    return std(input, dim, unbiased, keepdim, correction), _reduce(tf.reduce_mean, input, dim, keepdim)


MaxResult = collections.namedtuple("MaxResult", ["values", "indices"])


def torch_max(input, dim=None, keepdim=False):
    """torch.max: full reduction, elementwise maximum (tensor second argument), or (values, indices) along dim."""
    if dim is None:
        return tf.reduce_max(input)
    if hasattr(dim, "dtype") or hasattr(dim, "shape"):
        return tf.maximum(input, dim)
    values = tf.reduce_max(input, axis=dim, keepdims=keepdim)
    indices = tf.argmax(input, axis=dim, output_type=tf.int64)
    return MaxResult(values, tf.expand_dims(indices, dim) if keepdim else indices)


def torch_min(input, dim=None, keepdim=False):
    if dim is None:
        return tf.reduce_min(input)
    if hasattr(dim, "dtype") or hasattr(dim, "shape"):
        return tf.minimum(input, dim)
    values = tf.reduce_min(input, axis=dim, keepdims=keepdim)
    indices = tf.argmin(input, axis=dim, output_type=tf.int64)
    return MaxResult(values, tf.expand_dims(indices, dim) if keepdim else indices)


def argmax(input, dim=None, keepdim=False):
    if dim is None:
        return tf.argmax(tf.reshape(input, [-1]), output_type=tf.int64)
    result = tf.argmax(input, axis=dim, output_type=tf.int64)
    return tf.expand_dims(result, dim) if keepdim else result


def argmin(input, dim=None, keepdim=False):
    if dim is None:
        return tf.argmin(tf.reshape(input, [-1]), output_type=tf.int64)
    result = tf.argmin(input, axis=dim, output_type=tf.int64)
    return tf.expand_dims(result, dim) if keepdim else result


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if p in ("fro", 2, 2.0):
        return tf.sqrt(_reduce(tf.reduce_sum, tf.square(input), dim, keepdim))
    if p in (1, 1.0):
        return _reduce(tf.reduce_sum, tf.abs(input), dim, keepdim)
    if p in (float("inf"), "inf"):
        return _reduce(tf.reduce_max, tf.abs(input), dim, keepdim)
    return tf.pow(_reduce(tf.reduce_sum, tf.pow(tf.abs(input), p), dim, keepdim), 1.0 / p)


def scan_input(input, dtype=None):
    """The operand of a running reduction (cumsum, cumprod) as torch computes it: in `dtype` where given; integer
    and bool inputs as int64."""
    input = tf.convert_to_tensor(input)
    if dtype is not None:
        return tf.cast(input, _as_dtype(dtype))
    if input.dtype.is_integer or input.dtype == tf.bool:
        return tf.cast(input, tf.int64)
    return input


def cumsum(input, dim, dtype=None):
    """torch.cumsum: summed in `dtype` where given; integer and bool inputs give int64 as in torch."""
    return tf.cumsum(scan_input(input, dtype), axis=dim)


def masked_fill(input, mask, value):
    value = tf.cast(value, input.dtype)
    return tf.where(tf.cast(mask, tf.bool), value, input)


def where(condition, input=None, other=None):
    if input is None:
        raise NotImplementedError("torch.where(condition) has a data-dependent size (not XLA-compilable)")
    input, other = _promote(input, other)
    return tf.where(tf.cast(condition, tf.bool), input, other)


def _promote(a, b):
    a_tensor, b_tensor = hasattr(a, "dtype"), hasattr(b, "dtype")
    if a_tensor and not b_tensor:
        return a, tf.cast(b, a.dtype)
    if b_tensor and not a_tensor:
        return tf.cast(a, b.dtype), b
    if a_tensor and b_tensor and a.dtype != b.dtype:
        target = a.dtype if a.dtype.is_floating else b.dtype
        return tf.cast(a, target), tf.cast(b, target)
    return a, b


def divide_rounded(input, other, rounding_mode):
    """torch.div with `rounding_mode` "floor" or "trunc": the quotient rounded toward -inf or toward 0; integers
    stay integers, an integer tensor meeting a Python float is promoted to float32 as in torch."""
    if isinstance(other, float) and hasattr(input, "dtype") and not input.dtype.is_floating:
        input = tf.cast(input, tf.float32)
    if isinstance(input, float) and hasattr(other, "dtype") and not other.dtype.is_floating:
        other = tf.cast(other, tf.float32)
    input, other = _promote(input, other)
    if rounding_mode == "floor":
        return tf.math.floordiv(input, other)
    if input.dtype.is_integer:
        return tf.truncatediv(input, other)
    quotient = input / other
    return tf.where(quotient < 0, tf.math.ceil(quotient), tf.math.floor(quotient))


def clamp(input, min=None, max=None):
    if min is not None:
        input = tf.maximum(input, tf.cast(min, input.dtype))
    if max is not None:
        input = tf.minimum(input, tf.cast(max, input.dtype))
    return input


def rsqrt(input):
    return tf.math.rsqrt(input)


def torch_pow(input, exponent):
    return tf.pow(input, tf.cast(exponent, input.dtype) if not hasattr(exponent, "dtype") else exponent)


def to(input, *args, **kwargs):
    """Tensor.to(dtype) casts; devices are ignored (placement is the strategy's job)."""
    for value in list(args) + list(kwargs.values()):
        if isinstance(value, tf.dtypes.DType):
            return tf.cast(input, value)
        if hasattr(value, "dtype") and hasattr(value, "shape"):
            return tf.cast(input, value.dtype)
    return input


def type_as(input, other):
    return tf.cast(input, other.dtype)


def cast_to(input, dtype_name):
    return tf.cast(input, DTYPES[dtype_name])


def tensor_to(input, *targets):
    """`x.to(target, ...)` where porter could not tell what the target is: a dtype casts, a tensor casts to its
    dtype; a device (a string, None: the port has no devices) leaves x as it is."""
    for target in targets:
        if isinstance(target, tf.DType):
            return tf.cast(input, target)
        if tf.is_tensor(target):
            return tf.cast(input, target.dtype)
    return input


def arange(start=0, end=None, step=1, dtype=None, **unused):
    if end is None:
        start, end = 0, start
    dtype = _as_dtype(dtype)
    if dtype is None:
        dtype = tf.int64 if all(_integral(v) for v in (start, end, step)) else tf.float32
    return tf.range(*(tf.cast(v, dtype) if tf.is_tensor(v) else v for v in (start, end, step)), dtype=dtype)


def _integral(value):
    """A Python int or an integer tensor (a traced `int(t)`, a size read at run time): torch's arange of it gives
    int64."""
    if tf.is_tensor(value):
        return value.dtype.is_integer
    return isinstance(value, (int, np.integer))


def _size_and_dtype(size, dtype, keywords, default=tf.float32):
    """The shape a factory is given, as ints (`zeros(2, 3)`, `zeros((2, 3))`, `zeros(size=(2, 3))`: timm's beit.py),
    and its dtype."""
    if not size and keywords.get("size") is not None:
        size = (keywords["size"],)
    return _shape_args(size), _as_dtype(dtype) or default


def zeros(*size, dtype=None, **keywords):
    size, dtype = _size_and_dtype(size, dtype, keywords)
    return tf.zeros(size, dtype)


def ones(*size, dtype=None, **keywords):
    size, dtype = _size_and_dtype(size, dtype, keywords)
    return tf.ones(size, dtype)


def empty(*size, dtype=None, **keywords):
    return zeros(*size, dtype=dtype, size=keywords.get("size"))


def full(size, fill_value, dtype=None, **unused):
    default = tf.float32 if isinstance(fill_value, float) else tf.bool if isinstance(fill_value, bool) else \
        tf.int64 if isinstance(fill_value, int) else tf.float32
    return tf.fill(_shape_args((size,)), tf.cast(fill_value, _as_dtype(dtype) or default))


def randn(*size, dtype=None, generator=None, **keywords):
    """torch.randn; a complex dtype draws real and imaginary parts each with variance 1/2, as torch does (S4D's
    `torch.randn(h, n, dtype=torch.cfloat)`)."""
    size, dtype = _size_and_dtype(size, dtype, keywords)
    if dtype is not None and dtype.is_complex:
        part = dtype.real_dtype
        scale = tf.constant(0.5 ** 0.5, part)
        return tf.complex(tf.random.normal(size, dtype=part) * scale, tf.random.normal(size, dtype=part) * scale)
    return tf.random.normal(size, dtype=dtype)


def rand(*size, dtype=None, generator=None, **keywords):
    size, dtype = _size_and_dtype(size, dtype, keywords)
    return tf.random.uniform(size, dtype=dtype)


def randint(low, high=None, size=None, dtype=None, **unused):
    if size is None:
        low, high, size = 0, low, high
    return tf.random.uniform(_shape_args((size,)), low, high, dtype=_as_dtype(dtype) or tf.int64)


def eye(n, m=None, dtype=None, **unused):
    return tf.eye(n, m, dtype=_as_dtype(dtype) or tf.float32)


def zeros_like(input, dtype=None, **unused):
    return tf.zeros_like(input, dtype=_as_dtype(dtype))


def ones_like(input, dtype=None, **unused):
    return tf.ones_like(input, dtype=_as_dtype(dtype))


def full_like(input, fill_value, dtype=None, **unused):
    return tf.fill(tf.shape(input), tf.cast(fill_value, _as_dtype(dtype) or input.dtype))


def rand_like(input, dtype=None, **unused):
    return tf.random.uniform(tf.shape(input), dtype=_as_dtype(dtype) or input.dtype)


def randn_like(input, dtype=None, **unused):
    return tf.random.normal(tf.shape(input), dtype=_as_dtype(dtype) or input.dtype)


def tensor_from(data, dtype=None, **unused):
    """torch.tensor / as_tensor: floats default to float32, ints to int64 (as torch)."""
    array = np.asarray(data)
    if dtype is None:
        dtype = tf.float32 if array.dtype.kind == "f" else tf.int64 if array.dtype.kind in "iu" else None
    return tf.constant(array, dtype=_as_dtype(dtype) if dtype is not None else None)


def as_tensor(data):
    """torch.as_tensor(data): a tensor or a variable (a parameter, which an initialiser then fills in place) as it
    is, other data as torch.tensor makes it."""
    if isinstance(data, (tf.Tensor, tf.Variable)) or hasattr(data, "assign"):  # (a Keras variable too)
        return data
    return tensor_from(data)


def legacy_tensor(*args, dtype=tf.float32):
    """torch.Tensor / FloatTensor / LongTensor: sizes (`torch.LongTensor(4)`: 4 entries, zeros where torch leaves
    them uninitialised; a size read from an input traced with its batch unknown, `torch.LongTensor(x.size(0))`, is a
    scalar integer tensor here, so such a tensor stands for a size, not for data) or the data of a sequence."""
    dtype = _as_dtype(dtype)
    if args and all(_is_size(a) for a in args):
        return tf.zeros([int(a) if isinstance(a, numbers.Integral) else tf.cast(a, tf.int32) for a in args],
                        dtype=dtype)
    data = args[0] if args else []
    try:
        return tf.constant(np.asarray(data), dtype=dtype)
    except (TypeError, ValueError, NotImplementedError):  # a tensor, or a list holding traced sizes
        return tf.cast(tf.convert_to_tensor(data), dtype)


def _is_size(value):
    """An int, or a scalar integer tensor (a size of a traced input)."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return tf.is_tensor(value) and value.shape.rank == 0 and value.dtype.is_integer


def linspace(start, end, steps, dtype=None, **unused):
    return tf.cast(tf.linspace(float(start), float(end), steps), _as_dtype(dtype) or tf.float32)


def logspace(start, end, steps, base=10.0, dtype=None, **unused):
    """torch.logspace: `steps` powers base ** e for e evenly spaced from start to end (float32 unless `dtype`; an
    integer dtype truncates powers computed in float64, as torch does)."""
    dtype = _as_dtype(dtype) or tf.float32
    compute = tf.float64 if dtype.is_integer else dtype
    exponents = tf.linspace(tf.cast(start, compute), tf.cast(end, compute), steps)
    return tf.cast(tf.pow(tf.cast(base, compute), exponents), dtype)


def tril(input, diagonal=0):
    rows, cols = input.shape[-2], input.shape[-1]
    mask = np.tril(np.ones((rows, cols), dtype=bool), diagonal)
    return tf.where(mask, input, tf.zeros_like(input))


def triu(input, diagonal=0):
    rows, cols = input.shape[-2], input.shape[-1]
    mask = np.triu(np.ones((rows, cols), dtype=bool), diagonal)
    return tf.where(mask, input, tf.zeros_like(input))


def new_tensor_like(input, kind, size=None, fill_value=None, dtype=None, **unused):
    """x.new_zeros / new_ones / new_full / new_empty: same dtype as x unless given."""
    dtype = _as_dtype(dtype) or input.dtype
    size = _shape_args((size,)) if size is not None else None
    if kind == "full":
        return tf.fill(size, tf.cast(fill_value, dtype))
    return (tf.ones if kind == "ones" else tf.zeros)(size, dtype)


def gather(input, dim, index):
    """torch.gather: out[..i..] = input[..index[..i..] at `dim`..]. Along the last axis a take_along_axis; along
    another, a gather_nd of full coordinates (the index's position elsewhere): take_along_axis moves the axis last
    and back, three transposes under XLA (CenterNet's `feat.gather(1, ind)`)."""
    input, index = tf.convert_to_tensor(input), tf.cast(index, tf.int64)
    rank = len(index.shape)
    dim = dim % rank
    if dim == rank - 1:
        return tf.experimental.numpy.take_along_axis(input, index, axis=dim)
    shape = tf.shape(index, out_type=tf.int64)
    grids = tf.meshgrid(*[tf.range(shape[axis]) for axis in range(rank)], indexing="ij")
    grids[dim] = index
    return tf.gather_nd(input, tf.stack(grids, axis=-1))


def topk(input, k, dim=-1, largest=True, sorted=True):
    """torch.topk along any axis: tf.math.top_k takes the last, so another axis is moved there and back."""
    input = tf.convert_to_tensor(input)
    rank = len(input.shape)
    dim = dim % rank
    moved = list(range(rank)) if dim == rank - 1 else [d for d in range(rank) if d != dim] + [dim]
    back = [moved.index(d) for d in range(rank)]
    operand = input if dim == rank - 1 else tf.transpose(input, moved)
    values, indices = tf.math.top_k(operand if largest else -operand, k=k, sorted=sorted)
    values, indices = (values if largest else -values), tf.cast(indices, tf.int64)
    if dim != rank - 1:
        values, indices = tf.transpose(values, back), tf.transpose(indices, back)
    return MaxResult(values, indices)


def sort(input, dim=-1, descending=False, stable=False):
    """torch.sort: (values, indices as int64) along `dim`. Ties keep their order (torch's stable=True; its default
    leaves the order of ties unspecified)."""
    direction = "DESCENDING" if descending else "ASCENDING"
    values = tf.sort(input, axis=dim, direction=direction)
    return MaxResult(values, argsort(input, dim, descending))


def argsort(input, dim=-1, descending=False, stable=False):
    """torch.argsort: the int64 indices that sort `input` along `dim` (ties in their order, see `sort`)."""
    direction = "DESCENDING" if descending else "ASCENDING"
    return tf.cast(tf.argsort(input, axis=dim, direction=direction, stable=True), tf.int64)


def index_select(input, dim, index):
    """torch.index_select: the entries `index` (1-D) of axis `dim`, in that order (an axis already remapped for a
    channels-last input)."""
    return tf.gather(input, tf.reshape(index, [-1]), axis=dim)


def item(input):
    """Tensor.item(): run eagerly, the Python number torch gives (a config computed in __init__: timm's drop-path
    rates `[x.item() for x in torch.linspace(0, rate, n)]`, which DropPath then tests as `drop_prob == 0.`; a
    tensor there failed when the model was traced); traced (tf.function, XLA), the scalar tensor itself (the value
    is not known until run time, and the graph stays compilable)."""
    value = tf.reshape(input, [])
    if tf.executing_eagerly():
        return value.numpy().item()
    return value


def python_scalar(input, kind):
    """`int(t)`, `float(t)`, `bool(t)` of a one-element tensor: run eagerly, the Python number torch gives (`kind` of
    the value); traced (tf.function, XLA: the value is not known until run time), a scalar tensor of that kind:
    int64 for `int` (torch's integer dtype, truncated toward zero as `int` truncates; the port promotes it where it
    meets a float), bool for `bool` (nonzero), float32 for `float`."""
    value = tf.reshape(input, [])
    if tf.executing_eagerly():
        return kind(value.numpy())
    return tf.cast(value, tf.bool if kind is bool else tf.int64 if kind is int else tf.float32)


def tolist(input):
    """Tensor.tolist(): Python numbers in nested lists, read on the host (eager code such as a config computed in
    __init__; TPU lint flags it inside forward). A constant the port computes with numpy (`np.linspace(...)`) is
    read the same way. Traced code (tf.function, XLA) has no host values: a traced tensor stays a tensor, for the
    consumers that take one (`pack_padded_sequence(x, lengths.tolist())`)."""
    if tf.is_tensor(input) and tf.get_static_value(input) is None:
        return input
    return np.asarray(input).tolist()


def numpy_value(input, force=False):
    """Tensor.numpy(): the values as a NumPy array, read on the host; a traced tensor stays a tensor (see
    `tolist`), so `pack_padded_sequence(x, lengths.cpu().numpy())` runs under tf.function and XLA too."""
    if tf.is_tensor(input) and tf.get_static_value(input) is None:
        return input
    return np.asarray(input)


def promote_like_torch(input, other):
    """An integer tensor meeting `other` in arithmetic, promoted as torch promotes it: to float32 (or the other
    tensor's float dtype) when `other` is a Python float or a floating tensor; unchanged otherwise (a Python int, an
    eager `int(t)`, meets anything as it is)."""
    if not tf.is_tensor(input) or not input.dtype.is_integer:
        return input
    if isinstance(other, float):
        return tf.cast(input, tf.float32)
    dtype = tf.as_dtype(other.dtype) if tf.is_tensor(other) or hasattr(other, "dtype") else None  # (a Keras
    # variable names its dtype by a string)
    if dtype is not None and dtype.is_floating:
        return tf.cast(input, dtype)
    return input


def ints_like_torch(input, other):
    """(input, other) as torch promotes two tensors of different dtypes meeting in arithmetic where one is an
    integer: an integer meeting a float becomes that float; two integers become the wider, except that a 0-dim
    tensor yields to a dimensioned one (int64 lengths + a 0-dim `t.int()`: int64; an int32 vector + a 0-dim int64:
    int32). Anything else is handed back as it is."""
    if not (tf.is_tensor(input) and tf.is_tensor(other)) or input.dtype == other.dtype:
        return input, other
    if input.dtype.is_integer and other.dtype.is_floating:
        return tf.cast(input, other.dtype), other
    if input.dtype.is_floating and other.dtype.is_integer:
        return input, tf.cast(other, input.dtype)
    if not (input.dtype.is_integer and other.dtype.is_integer):
        return input, other
    scalar_in, scalar_other = input.shape.rank == 0, other.shape.rank == 0
    if scalar_in != scalar_other:
        dtype = other.dtype if scalar_in else input.dtype
    elif input.dtype.is_unsigned != other.dtype.is_unsigned and max(input.dtype.size, other.dtype.size) == 1:
        dtype = tf.int16  # (uint8 with int8: the smallest type holding both)
    else:
        dtype = max((input.dtype, other.dtype), key=lambda d: (d.size, not d.is_unsigned))
    return tf.cast(input, dtype), tf.cast(other, dtype)


def floor_divide(input, other):
    return tf.math.floordiv(input, other)


def clone(input, **unused):
    return tf.identity(input)


def tensor_new(input, *args):
    """torch's legacy `x.new(...)`: x's dtype. No argument: an empty (0,) tensor; ints or a torch.Size: that size
    (torch leaves it uninitialised, here zeros); a tensor, array, list or tuple: its values (tuples are data, as in
    torch: `x.new((2, 3))` is the 2-vector [2, 3])."""
    if not args:
        return tf.zeros([0], input.dtype)
    if len(args) == 1 and not isinstance(args[0], tf.TensorShape) and not _is_size(args[0]):  # (a size read from
        # an input traced with its batch unknown is a scalar integer tensor: still a size)
        return tf.cast(tf.convert_to_tensor(args[0]), input.dtype)
    sizes = list(args[0]) if isinstance(args[0], tf.TensorShape) else list(args)
    return tf.zeros(_shape_args(sizes), input.dtype)


def tensor_new_tensor(input, data, dtype=None, **unused):
    """Tensor.new_tensor(data): `data` as a new tensor of input's dtype (or `dtype`); device and grad flags have
    no meaning in the port."""
    return tf.cast(tf.convert_to_tensor(data), _as_dtype(dtype) or input.dtype)
