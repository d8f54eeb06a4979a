"""MXNet's shape operators with Gluon's semantics, as `F.reshape`/`F.transpose` and the NDArray methods
`x.reshape(...)`/`x.transpose(...)` call them: reshape's special codes (0 copy, -1 infer, -2 copy the rest,
-3 merge two, -4 split one, `reverse=True` right to left), transpose's `axes` (empty: reversed) and squeeze.
The one interpreter of reshape codes (reshape_target) serves npx.reshape too, through its own code table."""

import tensorflow as tf

from porter.runtime.base import static_dims
from porter.runtime.regroup import view_in_layout

# The special codes of mxnet's two reshapes, by what each does (reshape_target): the legacy operator's (F.reshape,
# nd.reshape, x.reshape in Gluon 1) and npx.reshape's, which renumbers them and adds "drop". Any other code >= 0 is
# a size (npx's 0 too: an empty dim).
GLUON_RESHAPE_CODES = {0: "copy", -1: "infer", -2: "rest", -3: "merge", -4: "split"}
NPX_RESHAPE_CODES = {-1: "infer", -2: "copy", -3: "drop", -4: "rest", -5: "merge", -6: "split"}


def reshape_target(dims, codes, meanings, reverse=False, what="reshape"):
    """mxnet's reshape shape inference (InferReshapeShape, NumpyXReshapeInferShape): the target shape (a list; -1
    left for tf.reshape to infer) for input `dims` (ints, scalar tensors where unknown) and shape `codes`, each
    special code doing what `meanings` (GLUON_RESHAPE_CODES, NPX_RESHAPE_CODES) says: "copy" one input dim, "infer"
    (-1), "drop" an input dim of size 1, "rest" copies every remaining input dim, "merge" two input dims into their
    product, "split" one input dim into the two sizes after the code (one may be -1). reverse=True reads both lists
    from the right, as mxnet does (a split's two sizes then stand before it)."""
    written = tuple(int(code) for code in codes)
    dims, codes = list(dims), list(written)
    if reverse:
        dims, codes = dims[::-1], codes[::-1]
    out, source, i, split = [], 0, 0, False
    try:
        while i < len(codes):
            code = codes[i]
            meaning = meanings.get(code, "size" if code >= 0 else None)
            if meaning == "infer" and split and meanings is GLUON_RESHAPE_CODES:
                # (mxnet 1.9's NDArray.reshape raises; its F.reshape returns an array of another size)
                raise ValueError("mxnet's legacy reshape cannot infer a -1 after a -4 split")
            if meaning in ("size", "infer"):
                out.append(code)
                source += 1
            elif meaning == "copy":
                out.append(dims[source])
                source += 1
            elif meaning == "drop":
                if isinstance(dims[source], int) and dims[source] != 1:
                    raise ValueError(f"drops input dim {source} of size {dims[source]}, not 1")
                source += 1
            elif meaning == "rest":
                out.extend(dims[source:])
                source = len(dims)
            elif meaning == "merge":
                out.append(dims[source] * dims[source + 1])
                source += 2
            elif meaning == "split":
                out.extend(_split_sizes(dims[source], codes[i + 1], codes[i + 2]))
                source, i, split = source + 1, i + 2, True
            else:
                raise ValueError(f"unknown special code {code}")
            i += 1
    except IndexError:
        raise ValueError(f"{what}: shape {written} does not fit input dims {tuple(dims)}") from None
    except ValueError as error:
        raise ValueError(f"{what}: shape {written} on input dims {tuple(dims)}: {error}") from None
    return out[::-1] if reverse else out


def _split_sizes(size, first, second):
    """The two sizes a split code makes of an input dim of `size` (either written -1: inferred from the other)."""
    if first == -1 and second == -1:
        raise ValueError("a split's two sizes cannot both be -1")
    first = size // second if first == -1 else first
    second = size // first if second == -1 else second
    if isinstance(size, int) and first * second != size:
        raise ValueError(f"split sizes {first}, {second} do not make input dim {size}")
    return [first, second]


def reshape_by_codes(data, codes, meanings, reverse=False, what="reshape"):
    """`data` reshaped to the target reshape_target makes of its dims (an unknown dim kept as a tensor)."""
    x = tf.convert_to_tensor(data)
    target = reshape_target(static_dims(x), codes, meanings, reverse=reverse, what=what)
    if any(isinstance(size, tf.Tensor) for size in target):
        target = tf.stack([tf.cast(size, tf.int32) for size in target])
    return tf.reshape(x, target)


def gluon_reshape(data, *dims, shape=None, reverse=False, name=None):
    """F.reshape(data, shape) / x.reshape(shape) / x.reshape(d0, d1, ...) with mxnet's special codes."""
    if shape is None:
        shape = dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    return reshape_by_codes(data, shape, GLUON_RESHAPE_CODES, reverse=reverse)


def gluon_reshape_in_layout(data, order, out_order, shape):
    """F.reshape(data, shape) on a tensor whose axes hold Gluon dims `order`, the result's axes to hold `out_order`
    (a channel shuffle on a channels-last image): the special codes resolved against Gluon's dims, then reshaped
    as it lies where the sizes allow (porter/runtime/regroup.py), else through Gluon's order."""
    data = tf.convert_to_tensor(data)
    if len(data.shape) != len(order):
        raise ValueError(f"reshape: the port expected a rank-{len(order)} tensor here, got shape {data.shape}")
    stored = static_dims(data)
    dims = [stored[order.index(d)] for d in range(len(order))]
    target = reshape_target(dims, shape, GLUON_RESHAPE_CODES)
    if len(target) != len(out_order):
        raise ValueError(f"reshape: the port expected a rank-{len(out_order)} result for shape {tuple(shape)}, got "
                         f"{target}")
    return view_in_layout(data, order, out_order, *target)


def gluon_transpose(data, *given, axes=None, name=None):
    """F.transpose(data, axes) / x.transpose(axes) / x.transpose(a0, a1, ...): axes permuted (empty: reversed)."""
    x = tf.convert_to_tensor(data)
    if axes is None:
        axes = given[0] if len(given) == 1 and isinstance(given[0], (tuple, list)) else given
    axes = tuple(axes) if axes is not None else ()
    return tf.transpose(x, list(axes) if axes else None)


def gluon_slice_axis(data, axis, begin, end, name=None):
    """F.slice_axis(data, axis, begin, end): entries begin..end-1 along `axis` (negative counts from the end;
    end None: to the end)."""
    x = tf.convert_to_tensor(data)
    rank = len(x.shape)
    axis = axis % rank
    size = x.shape[axis] if x.shape[axis] is not None else tf.shape(x)[axis]
    begin = begin + size if begin < 0 else begin
    end = size if end is None else (end + size if end < 0 else end)
    index = [slice(None)] * axis + [slice(begin, end)]
    return x[tuple(index)]


def gluon_squeeze(data, axis=None, inplace=False, name=None):
    """mx.nd.squeeze: the given size-1 axes removed (an int or a tuple), else every size-1 axis; a result without
    axes keeps one of size 1, as mxnet's does (its NDArrays have no rank 0)."""
    x = tf.convert_to_tensor(data)
    if axis is None:
        dims = [i for i, size in enumerate(x.shape) if size == 1]  # static sizes: mxnet reads the shape
        return tf.reshape(x, [1]) if len(dims) == len(x.shape) else tf.squeeze(x, dims)
    axes = [axis] if isinstance(axis, int) else list(axis)
    y = tf.squeeze(x, [a % len(x.shape) for a in axes])
    return tf.reshape(y, [1]) if len(y.shape) == 0 else y
