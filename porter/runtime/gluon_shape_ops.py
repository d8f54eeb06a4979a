"""MXNet's shape operators with Gluon's semantics, as `F.reshape`/`F.transpose` and the NDArray methods
`x.reshape(...)`/`x.transpose(...)` call them: reshape's special codes (0 copy, -1 infer, -2 copy the rest,
-3 merge two, -4 split one, `reverse=True` right to left), transpose's `axes` (empty: reversed) and squeeze."""

import tensorflow as tf

from porter.runtime.base import static_dims
from porter.runtime.regroup import view_in_layout


def gluon_reshape_target(dims, shape):
    """mxnet's InferReshapeShape: the target shape (a list; -1 left for tf.reshape to infer) for input `dims`."""
    shape, out, source, i = list(shape), [], 0, 0
    while i < len(shape):
        code = int(shape[i])
        if code > 0:
            out.append(code)
            source += 1
        elif code == 0:
            out.append(dims[source])
            source += 1
        elif code == -1:
            out.append(-1)
            source += 1
        elif code == -2:
            out.extend(dims[source:])
            source = len(dims)
        elif code == -3:
            out.append(dims[source] * dims[source + 1])
            source += 2
        elif code == -4:
            first, second = int(shape[i + 1]), int(shape[i + 2])
            size = dims[source]
            first = size // second if first == -1 else first
            second = size // first if second == -1 else second
            out.extend([first, second])
            source += 1
            i += 2
        else:
            raise ValueError(f"reshape: unknown special code {code} in {tuple(shape)}")
        i += 1
    return out


def gluon_reshape(data, *dims, shape=None, reverse=False, name=None):
    """F.reshape(data, shape) / x.reshape(shape) / x.reshape(d0, d1, ...) with mxnet's special codes."""
    x = tf.convert_to_tensor(data)
    if shape is None:
        shape = dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    sizes = static_dims(x)
    if reverse:
        if -4 in [int(s) for s in shape]:
            raise NotImplementedError("reshape: reverse=True with -4 is not supported by porter yet")
        target = list(reversed(gluon_reshape_target(list(reversed(sizes)), list(reversed(list(shape))))))
    else:
        target = gluon_reshape_target(sizes, shape)
    if any(isinstance(size, tf.Tensor) for size in target):
        target = tf.stack([tf.cast(size, tf.int32) for size in target])
    return tf.reshape(x, target)


def gluon_reshape_in_layout(data, order, out_order, shape):
    """F.reshape(data, shape) on a tensor whose axes hold Gluon dims `order`, the result's axes to hold `out_order`
    (a channel shuffle on a channels-last image): the special codes resolved against Gluon's dims, then reshaped
    as it lies where the sizes allow (porter/runtime/regroup.py), else through Gluon's order."""
    data = tf.convert_to_tensor(data)
    if len(data.shape) != len(order):
        raise ValueError(f"reshape: the port expected a rank-{len(order)} tensor here, got shape {data.shape}")
    stored = static_dims(data)
    dims = [stored[order.index(d)] for d in range(len(order))]
    target = gluon_reshape_target(dims, shape)
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
