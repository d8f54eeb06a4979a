"""Pooling, resizing, padding and pixel shuffle with torch semantics, on channels-last tensors.

Every op here is "channels_last": a torch (N, C, *spatial) tensor arrives as (N, *spatial, C). Spatial sizes must
be static (they are read from `x.shape`); the batch size may be unknown. All index and weight tables (pooling
divisors, adaptive bins, interpolation indices and lambdas) are computed in NumPy at trace time with torch's own
float32 formulas and baked into the graph as constants, so the graphs are XLA-compilable and need no matmul (no
TF32/bfloat16 matmul precision loss on GPU/TPU).
"""

import itertools

import numpy as np
import tensorflow as tf

from porter.runtime.base import TorchLayer

# ----------------------------------------------------------------------------------------------------------------
# helpers


def _pool_tuple(value, n, name="argument"):
    """torch's _single/_pair/_triple: an int (or 1-element sequence) repeated n times, or an n-sequence."""
    if isinstance(value, (list, tuple)):
        value = tuple(int(v) for v in value)
        if len(value) == 1 and n > 1:
            value = value * n
        if len(value) != n:
            raise ValueError(f"{name} must be an int or a sequence of {n} ints, got {value}")
        return value
    return (int(value),) * n


def _pool_shape(x):
    """x's shape as a list: static ints where known, scalar tensors where not (for tf.reshape)."""
    dynamic = None
    dims = []
    for axis, size in enumerate(x.shape):
        if size is None:
            if dynamic is None:
                dynamic = tf.shape(x)
            dims.append(dynamic[axis])
        else:
            dims.append(int(size))
    return dims


def _pool_spatial(x, n, what):
    """The n static spatial sizes of channels-last x (N, *spatial, C)."""
    if len(x.shape) != n + 2:
        raise ValueError(f"{what} expects a batched rank-{n + 2} channels-last tensor, got shape {x.shape}")
    sizes = tuple(x.shape[1:1 + n])
    if any(size is None for size in sizes):
        raise ValueError(f"{what} needs static spatial sizes, got shape {x.shape}")
    return tuple(int(size) for size in sizes)


def _pool_output_length(length, kernel, stride, padding, dilation, ceil_mode):
    """torch's pooling_output_shape, including the ceil_mode rule that the last window starts inside the input
    or the left padding."""
    span = length + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1  # floor division, as torch's div_rtn
    if ceil_mode and (out - 1) * stride >= length + padding:
        out -= 1
    if out < 1:
        raise ValueError(f"pooling output size would be {out} for input size {length}, kernel {kernel}, "
                         f"stride {stride}, padding {padding}, dilation {dilation}")
    return out


def _pool_fill_value(dtype):
    """-inf for floating dtypes (torch pads max pooling with -inf), the dtype's minimum otherwise."""
    dtype = tf.as_dtype(dtype)
    return -np.inf if dtype.is_floating else dtype.min


def _pool_windows(x, n, kernel_size, stride, padding, dilation, ceil_mode, fill, what):
    """Pad (fill value) channels-last x so that VALID windows give torch's output; returns (x, geometry)."""
    spatial = _pool_spatial(x, n, what)
    kernel = _pool_tuple(kernel_size, n, "kernel_size")
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) \
        else _pool_tuple(stride, n, "stride")
    padding = _pool_tuple(padding, n, "padding")
    dilation = _pool_tuple(dilation, n, "dilation")
    outs = tuple(_pool_output_length(*args, ceil_mode) for args in zip(spatial, kernel, stride, padding, dilation))
    pads = [[0, 0]]
    for length, k, s, p, d, o in zip(spatial, kernel, stride, padding, dilation, outs):
        needed = (o - 1) * s + d * (k - 1) + 1  # padded length the windows span
        pads.append([p, max(needed - length - p, 0)])
    pads.append([0, 0])
    if any(before or after for before, after in pads):
        x = tf.pad(x, pads, constant_values=tf.cast(fill, x.dtype))
    return x, (spatial, kernel, stride, padding, dilation, outs)


def _pool_strided_windows(x, geometry, reduce):
    """Reduce the windows of (padded) x with `reduce` (tf.maximum / tf.add) via one strided slice per tap."""
    _, kernel, stride, _, dilation, outs = geometry
    result = None
    for taps in itertools.product(*[range(k) for k in kernel]):
        index = [slice(None)]
        for tap, s, d, o in zip(taps, stride, dilation, outs):
            start = tap * d
            index.append(slice(start, start + (o - 1) * s + 1, s))
        index.append(slice(None))
        window = x[tuple(index)]
        result = window if result is None else reduce(result, window)
    return result


def _pool_first_max(best, where, window, at):
    """One tap of torch's max scan: a later tap replaces the best value (and its index) only where it is greater, or
    NaN."""
    better = window > best
    if window.dtype.is_floating:
        better = better | tf.math.is_nan(window)
    return tf.where(better, window, best), tf.where(better, at, where)


def _pool_max_indices(x, geometry):
    """Max pooling of the padded channels-last `x` with torch's indices: for each output position, the flat index
    (row-major over the unpadded spatial dims of its (n, c) plane) of its window's first maximum, taps scanned in
    torch's order (a later tap replaces only a greater value, or any NaN)."""
    spatial, kernel, stride, padding, dilation, outs = geometry
    plane = [int(np.prod(spatial[axis + 1:])) for axis in range(len(spatial))]  # element stride of each axis
    best = where = None
    for taps in itertools.product(*[range(k) for k in kernel]):
        index, flat = [slice(None)], np.zeros(outs, np.int64)
        for axis, (tap, s, p, d, o) in enumerate(zip(taps, stride, padding, dilation, outs)):
            index.append(slice(tap * d, tap * d + (o - 1) * s + 1, s))
            shape = [1] * len(outs)
            shape[axis] = o
            flat = flat + ((np.arange(o) * s + tap * d - p) * plane[axis]).reshape(shape)
        index.append(slice(None))
        window = x[tuple(index)]
        at = tf.broadcast_to(tf.constant(flat[None, ..., None]), tf.shape(window))
        if best is None:
            best, where = window, at
            continue
        best, where = _pool_first_max(best, where, window, at)
    return best, where


def _pool_max(x, n, kernel_size, stride, padding, dilation, ceil_mode, return_indices, what):
    x, geometry = _pool_windows(x, n, kernel_size, stride, padding, dilation, ceil_mode,
                                _pool_fill_value(x.dtype), what)
    if return_indices:  # (values and indices, both channels-last)
        return _pool_max_indices(x, geometry)
    _, kernel, stride, _, dilation, _ = geometry
    if all(d == 1 for d in dilation):
        data_format = {1: "NWC", 2: "NHWC", 3: "NDHWC"}[len(kernel)]  # explicit: eager MaxPool3D grad needs it
        return tf.nn.max_pool(x, list(kernel), list(stride), "VALID", data_format=data_format)
    return _pool_strided_windows(x, geometry, tf.maximum)


def _pool_avg_divisors(geometry, count_include_pad):
    """Per output position, torch's avg-pool divisor (product of the per-axis window lengths)."""
    spatial, kernel, stride, padding, _, outs = geometry
    divisor = np.ones((), np.float64)
    for length, k, s, p, o in zip(spatial, kernel, stride, padding, outs):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, length + p)
        if count_include_pad:
            size = end - start
        else:
            size = np.minimum(end, length) - np.maximum(start, 0)
        divisor = np.multiply.outer(divisor, size.astype(np.float64))
    return divisor


def _pool_avg(x, n, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, what):
    x, geometry = _pool_windows(x, n, kernel_size, stride, padding, 1, ceil_mode, 0, what)
    kernel = geometry[1]
    y = tf.nn.avg_pool(x, list(kernel), list(geometry[2]), "VALID")  # window sum / prod(kernel)
    count = float(np.prod(kernel))
    if divisor_override:
        factor = count / float(divisor_override)
        return y if factor == 1.0 else y * tf.cast(factor, y.dtype)
    factor = count / _pool_avg_divisors(geometry, count_include_pad)
    if np.all(factor == 1.0):
        return y
    return y * tf.constant(factor[..., None], dtype=y.dtype)


def _pool_adaptive_bins(length, out):
    """torch's adaptive bins: start = floor(i*L/out), end = ceil((i+1)*L/out)."""
    i = np.arange(out)
    start = (i * length) // out
    end = -((-(i + 1) * length) // out)
    return start, end


def _pool_split_axis(x, axis, parts):
    """Reshape axis `axis` of x (length L) into (parts, L // parts)."""
    shape = _pool_shape(x)
    return tf.reshape(x, shape[:axis] + [parts, shape[axis] // parts] + shape[axis + 1:])


def _pool_adaptive_axis(x, axis, out, mode):
    """Adaptive average ("avg") or max ("max") pooling of one static axis of x to `out` bins."""
    length = int(x.shape[axis])
    if out is None or out == length:
        return x
    reduce = tf.reduce_mean if mode == "avg" else tf.reduce_max
    if out == 1:
        return reduce(x, axis=axis, keepdims=True)
    if length % out == 0:  # equal, disjoint bins: a reshape and a reduction
        return reduce(_pool_split_axis(x, axis, out), axis=axis + 1)
    start, end = _pool_adaptive_bins(length, out)
    width = int((end - start).max())
    taps = start[:, None] + np.arange(width)[None, :]
    valid = taps < end[:, None]
    taps = np.where(valid, taps, (end - 1)[:, None])  # repeat the last element: harmless for max, masked for avg
    gathered = tf.gather(x, tf.constant(taps, tf.int32), axis=axis)  # (..., out, width, ...)
    trailing = len(x.shape) - axis - 1
    if mode == "max":
        return tf.reduce_max(gathered, axis=axis + 1)
    weights = valid / (end - start)[:, None].astype(np.float64)
    weights = tf.constant(weights.reshape(weights.shape + (1,) * trailing), dtype=x.dtype)
    return tf.reduce_sum(gathered * weights, axis=axis + 1)


def _pool_adaptive(x, n, output_size, mode, what):
    spatial = _pool_spatial(x, n, what)
    sizes = _pool_adaptive_sizes(output_size, spatial, n, what)
    for axis in reversed(range(n)):
        x = _pool_adaptive_axis(x, axis + 1, sizes[axis], mode)
    return x


def _pool_adaptive_sizes(output_size, spatial, n, what):
    """The output's spatial sizes of an adaptive pool (None entries keep the input's)."""
    if isinstance(output_size, (list, tuple)):
        sizes = tuple(output_size)
        if len(sizes) == 1 and n > 1:
            sizes = sizes * n
    else:
        sizes = (output_size,) * n
    if len(sizes) != n:
        raise ValueError(f"{what}: output_size {output_size} does not have {n} entries")
    sizes = tuple(length if size is None else int(size) for size, length in zip(sizes, spatial))
    if min(sizes) < 1:
        raise ValueError(f"{what}: output_size {output_size} has an empty dimension")
    return sizes


# ----------------------------------------------------------------------------------------------------------------
# interpolation: index/lambda tables with torch's CPU float32 formulas


def _pool_scale(length, out, scale, align_corners):
    """torch's area_pixel_compute_scale in float32 (scale = the user's scale_factor, or None)."""
    if align_corners:
        return np.float32(length - 1) / np.float32(out - 1) if out > 1 else np.float32(0.0)
    if scale is not None and scale > 0:
        return np.float32(1.0 / scale)
    return np.float32(length) / np.float32(out)


def _pool_nearest_index(length, out, scale, exact, shortcuts):
    """Source indices of torch's 'nearest' (floor(dst * scale)) or 'nearest-exact' (floor((dst + .5) * scale)).

    `shortcuts`: torch's 2-D nearest kernel (nearest_idx) maps out == in to the identity and out == 2 * in to
    dst >> 1 whatever the scale_factor; its 1-D and 3-D (contiguous) kernels do not. They differ only for a
    non-integer scale_factor whose output size happens to be in or 2 * in.
    """
    dst = np.arange(out)
    s = _pool_scale(length, out, scale, False)
    if exact:
        src = np.floor(((dst + 0.5) * np.float64(s)).astype(np.float32)).astype(np.int64)
    elif shortcuts and out == length:
        src = dst
    elif shortcuts and out == 2 * length:
        src = dst >> 1
    else:
        src = np.floor(dst.astype(np.float32) * s).astype(np.int64)
    return np.minimum(src, length - 1)


def _pool_linear_table(length, out, scale, align_corners):
    """torch's compute_source_index_and_lambda: (index0, index1, lambda0, lambda1), float32 lambdas."""
    dst = np.arange(out)
    if out == length:
        return dst, dst, np.ones(out, np.float32), np.zeros(out, np.float32)
    s = _pool_scale(length, out, scale, align_corners)
    if align_corners:
        real = s * dst.astype(np.float32)
    else:
        real = s * (dst.astype(np.float32) + np.float32(0.5)) - np.float32(0.5)
        real = np.maximum(real, np.float32(0.0))
    index0 = np.minimum(np.floor(real).astype(np.int64), length - 1)
    lambda1 = np.clip(real - index0.astype(np.float32), 0, 1).astype(np.float32)
    index1 = index0 + (index0 < length - 1)
    return index0, index1, (np.float32(1.0) - lambda1).astype(np.float32), lambda1


def _pool_cubic_table(length, out, scale, align_corners):
    """torch's bicubic taps (A = -0.75, border-clamped indices): (indices (out, 4), weights (out, 4))."""
    dst = np.arange(out)
    s = _pool_scale(length, out, scale, align_corners)
    if align_corners:
        real = s * dst.astype(np.float32)
    else:
        real = s * (dst.astype(np.float32) + np.float32(0.5)) - np.float32(0.5)
    index = np.floor(real).astype(np.int64)
    t = (real - index.astype(np.float32)).astype(np.float32)
    a = np.float32(-0.75)

    def near(v):  # |v| <= 1
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v):  # 1 < |v| < 2
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    one = np.float32(1.0)
    weights = np.stack([far(t + one), near(t), near(one - t), far(np.float32(2.0) - t)], axis=1)
    taps = np.clip(index[:, None] + np.arange(-1, 3)[None, :], 0, length - 1)
    return taps, weights.astype(np.float32)


def _pool_axis_weights(weights, x, axis):
    """Weights of shape (out,) or (out, k) as a constant broadcasting against axis `axis` of x."""
    trailing = len(x.shape) - axis - 1
    weights = np.asarray(weights)
    return tf.constant(weights.reshape(weights.shape + (1,) * trailing), dtype=x.dtype)


def _pool_repeat_axis(x, axis, factor):
    """Repeat every element of axis `axis` `factor` times (nearest upsampling by an integer) without a gather."""
    shape = _pool_shape(x)
    expanded = tf.expand_dims(x, axis + 1)
    tiled = tf.broadcast_to(expanded, shape[:axis + 1] + [factor] + shape[axis + 1:])
    return tf.reshape(tiled, shape[:axis] + [shape[axis] * factor] + shape[axis + 1:])


def _pool_resize_axis(x, axis, out, scale, mode, align_corners):
    """Resize one static axis of x to `out` with torch's index/lambda rules for `mode`."""
    length = int(x.shape[axis])
    if mode in ("nearest", "nearest-exact"):
        index = _pool_nearest_index(length, out, scale, mode == "nearest-exact", len(x.shape) == 4)
        if out == length and np.array_equal(index, np.arange(out)):
            return x
        if out % length == 0 and np.array_equal(index, np.arange(out) // (out // length)):
            return _pool_repeat_axis(x, axis, out // length)
        return tf.gather(x, tf.constant(index, tf.int32), axis=axis)
    if mode == "linear":
        index0, index1, lambda0, lambda1 = _pool_linear_table(length, out, scale, align_corners)
        if out == length and np.array_equal(index0, np.arange(out)) and not lambda1.any():
            return x
        x0 = tf.gather(x, tf.constant(index0, tf.int32), axis=axis)
        x1 = tf.gather(x, tf.constant(index1, tf.int32), axis=axis)
        return x0 * _pool_axis_weights(lambda0, x, axis) + x1 * _pool_axis_weights(lambda1, x, axis)
    if mode == "cubic":
        taps, weights = _pool_cubic_table(length, out, scale, align_corners)
        gathered = tf.gather(x, tf.constant(taps, tf.int32), axis=axis)  # (..., out, 4, ...)
        return tf.reduce_sum(gathered * _pool_axis_weights(weights, x, axis), axis=axis + 1)
    raise ValueError(f"unknown resize mode {mode}")


_POOL_MODES = {"nearest": (None, "nearest"), "nearest-exact": (None, "nearest-exact"), "linear": (1, "linear"),
               "bilinear": (2, "linear"), "trilinear": (3, "linear"), "bicubic": (2, "cubic"),
               "area": (None, "area")}


def _pool_interpolate(x, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias):
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported by porter")
    if mode not in _POOL_MODES:
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported by porter")
    dims, kind = _POOL_MODES[mode]
    n = len(x.shape) - 2
    if dims is not None and dims != n:
        raise ValueError(f"interpolate: mode {mode!r} expects {dims} spatial dims, got input shape {x.shape}")
    if kind in ("nearest", "nearest-exact", "area") and align_corners:
        raise ValueError(f"align_corners option can only be set with the interpolating modes, not {mode!r}")
    spatial = _pool_spatial(x, n, "interpolate")
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        sizes = tuple(int(v) for v in size) if isinstance(size, (list, tuple, tf.TensorShape)) else (int(size),) * n
        scales = (None,) * n
    elif scale_factor is not None:
        scales = tuple(float(v) for v in scale_factor) if isinstance(scale_factor, (list, tuple)) \
            else (float(scale_factor),) * n
        sizes = tuple(int(length * s) for length, s in zip(spatial, scales))  # torch truncates in double
        if recompute_scale_factor or kind == "area":
            scales = (None,) * n
    else:
        raise ValueError("either size or scale_factor should be defined")
    if len(sizes) != n or len(scales) != n:
        raise ValueError(f"interpolate: size/scale_factor must have {n} entries")
    if min(sizes) < 1:
        raise ValueError(f"interpolate: output size {sizes} has an empty dimension (input {spatial})")
    if kind == "area":
        return _pool_adaptive(x, n, sizes, "avg", "interpolate")
    for axis in reversed(range(n)):  # last spatial axis first, as torch's kernels nest their lerps
        x = _pool_resize_axis(x, axis + 1, sizes[axis], scales[axis], kind, bool(align_corners))
    return x


# ----------------------------------------------------------------------------------------------------------------
# padding


def _pool_pad_pairs(x, pad, channels_last=True, order=None):
    """torch's pad tuple (last dim first) -> per axis [before, after] pairs of the channels-last tensor `x` (of
    `x` in torch's own order when not `channels_last`; of `x` holding torch's dims in `order`, when given)."""
    pad = [int(p) for p in pad]
    rank = len(x.shape)
    if len(pad) % 2 or len(pad) // 2 > rank:
        raise ValueError(f"padding length {len(pad)} is invalid for a rank-{rank} input")
    pairs = [[0, 0] for _ in range(rank)]
    for k in range(len(pad) // 2):
        torch_dim = rank - 1 - k
        if order is not None:
            axis = order.index(torch_dim)
        elif rank <= 2 or torch_dim == 0 or not channels_last:
            axis = torch_dim
        elif torch_dim == 1:
            axis = rank - 1
        else:
            axis = torch_dim - 1
        pairs[axis] = [pad[2 * k], pad[2 * k + 1]]
    return pairs


def _pool_pad_index(length, before, after, mode):
    """Source indices along one axis for reflect / replicate / circular padding (negative pads crop)."""
    position = np.arange(-before, length + after)
    if mode == "reflect":
        if before >= length or after >= length:
            raise ValueError(f"reflect padding ({before}, {after}) must be smaller than the dimension {length}")
        period = 2 * (length - 1)
        if period == 0:
            return np.zeros_like(position)
        position = np.mod(position, period)
        return np.where(position < length, position, period - position)
    if mode == "replicate":
        return np.clip(position, 0, length - 1)
    if mode == "circular":
        if before > length or after > length:
            raise ValueError(f"circular padding ({before}, {after}) must be at most the dimension {length}")
        return np.mod(position, length)
    raise NotImplementedError(f"pad: mode {mode!r} is not supported by porter")


def _pool_pad(x, pad, mode="constant", value=None, channels_last=True, order=None):
    pairs = _pool_pad_pairs(x, pad, channels_last, order)
    if mode == "constant":
        crop = [slice(max(-b, 0), (-max(-a, 0)) or None) for b, a in pairs]
        if any(b < 0 or a < 0 for b, a in pairs):
            x = x[tuple(crop)]
        grow = [[max(b, 0), max(a, 0)] for b, a in pairs]
        if any(b or a for b, a in grow):
            x = tf.pad(x, grow, constant_values=tf.cast(0 if value is None else value, x.dtype))
        return x
    if mode == "reflect" and all(b >= 0 and a >= 0 for b, a in pairs):
        return tf.pad(x, pairs, mode="REFLECT")
    for axis, (before, after) in enumerate(pairs):
        if before or after:
            length = x.shape[axis]
            if length is None:
                raise ValueError(f"pad: mode {mode!r} needs a static size on the padded axis {axis}")
            index = _pool_pad_index(int(length), before, after, mode)
            x = tf.gather(x, tf.constant(index, tf.int32), axis=axis)
    return x


# ----------------------------------------------------------------------------------------------------------------
# pixel shuffle


def _pool_pixel_shuffle(x, factor):
    """torch pixel_shuffle on (N, H, W, C*r*r) with torch's c*r*r + i*r + j channel order."""
    r = int(factor)
    channels = x.shape[-1]
    if len(x.shape) != 4 or channels is None or channels % (r * r):
        raise ValueError(f"pixel_shuffle expects (N, H, W, C*{r * r}) with static channels, got {x.shape}")
    if r == 1:
        return x
    c_out = channels // (r * r)
    # depth_to_space reads channel (i*r + j)*C + c; torch stores it at c*r*r + i*r + j
    order = np.arange(channels).reshape(c_out, r * r).T.reshape(-1)
    return tf.nn.depth_to_space(tf.gather(x, tf.constant(order, tf.int32), axis=3), r)


def _pool_pixel_unshuffle(x, factor):
    """torch pixel_unshuffle on (N, H*r, W*r, C) -> (N, H, W, C*r*r) in torch's channel order."""
    r = int(factor)
    channels = x.shape[-1]
    if len(x.shape) != 4 or channels is None:
        raise ValueError(f"pixel_unshuffle expects (N, H*{r}, W*{r}, C) with static channels, got {x.shape}")
    if r == 1:
        return x
    y = tf.nn.space_to_depth(x, r)  # channel (i*r + j)*C + c
    order = np.arange(channels * r * r).reshape(r * r, channels).T.reshape(-1)
    return tf.gather(y, tf.constant(order, tf.int32), axis=3)


# ----------------------------------------------------------------------------------------------------------------
# functional forms (channels-last tensors, torch signatures)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _pool_max(input, 1, kernel_size, stride, padding, dilation, ceil_mode, return_indices, "max_pool1d")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _pool_max(input, 2, kernel_size, stride, padding, dilation, ceil_mode, return_indices, "max_pool2d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _pool_max(input, 3, kernel_size, stride, padding, dilation, ceil_mode, return_indices, "max_pool3d")


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _pool_avg(input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, None, "avg_pool1d")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _pool_avg(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                     "avg_pool2d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _pool_avg(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                     "avg_pool3d")


def adaptive_avg_pool1d(input, output_size):
    return _pool_adaptive(input, 1, output_size, "avg", "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    return _pool_adaptive(input, 2, output_size, "avg", "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    return _pool_adaptive(input, 3, output_size, "avg", "adaptive_avg_pool3d")


def _pool_adaptive_max(input, n, output_size, return_indices, what):
    if return_indices:  # (values and indices, both channels-last)
        return _pool_adaptive_max_indices(input, n, output_size, what)
    return _pool_adaptive(input, n, output_size, "max", what)


def _pool_adaptive_max_indices(x, n, output_size, what):
    """Adaptive max pooling of the channels-last `x` with torch's indices: each output position's flat index (row-major
    over the spatial dims of its (n, c) plane) of its bin's first maximum, the bin's taps scanned in torch's order (a
    later tap replaces only a greater value, or any NaN); a bin shorter than the longest repeats its last tap."""
    spatial = _pool_spatial(x, n, what)
    sizes = _pool_adaptive_sizes(output_size, spatial, n, what)
    plane = [int(np.prod(spatial[axis + 1:])) for axis in range(n)]
    starts = [np.arange(o) * length // o for o, length in zip(sizes, spatial)]  # (torch's bins)
    ends = [((np.arange(o) + 1) * length + o - 1) // o for o, length in zip(sizes, spatial)]
    best = where = None
    for taps in itertools.product(*[range(int(np.max(e - s))) for s, e in zip(starts, ends)]):
        window, flat = x, np.zeros(sizes, np.int64)
        for axis, (tap, start, end) in enumerate(zip(taps, starts, ends)):
            rows = np.minimum(start + tap, end - 1)
            window = tf.gather(window, rows, axis=axis + 1)
            shape = [1] * n
            shape[axis] = sizes[axis]
            flat = flat + (rows * plane[axis]).reshape(shape)
        at = tf.broadcast_to(tf.constant(flat[None, ..., None]), tf.shape(window))
        if best is None:
            best, where = window, at
            continue
        best, where = _pool_first_max(best, where, window, at)
    return best, where


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _pool_adaptive_max(input, 1, output_size, return_indices, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _pool_adaptive_max(input, 2, output_size, return_indices, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _pool_adaptive_max(input, 3, output_size, return_indices, "adaptive_max_pool3d")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    return _pool_interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return _pool_interpolate(input, size, scale_factor, mode, align_corners, None, False)


def upsample_nearest(input, size=None, scale_factor=None):
    return _pool_interpolate(input, size, scale_factor, "nearest", None, None, False)


def upsample_bilinear(input, size=None, scale_factor=None):
    return _pool_interpolate(input, size, scale_factor, "bilinear", True, None, False)


def pixel_shuffle(input, upscale_factor):
    return _pool_pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    return _pool_pixel_unshuffle(input, downscale_factor)


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad on a channels-last tensor: `pad` is torch's tuple (last torch dim first)."""
    return _pool_pad(input, pad, mode, value)


def pad_in_torch_order(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad on a tensor kept in torch's own axis order (a (B, H, W, C) feature map, a
    sequence): the pad tuple applies to its last dims as torch reads it."""
    return _pool_pad(input, pad, mode, value, channels_last=False)


def pad_in_order(input, order, pad, mode="constant", value=None):
    """torch.nn.functional.pad on a tensor whose axes hold torch's dims in `order` (a permute left pending): each
    torch dim the pad tuple names is padded on the axis that holds it; nothing is transposed."""
    return _pool_pad(input, pad, mode, value, order=list(order))


# ----------------------------------------------------------------------------------------------------------------
# module classes


def _pool_in_axis_order(n, axis_order, *settings):
    """Per-axis pool settings (an int for every axis, or one per torch spatial dim) in the order a tensor stores
    its spatial axes (`axis_order`; None: torch's)."""
    if axis_order is None:
        return settings
    per_axis = [tuple(s) if isinstance(s, (tuple, list)) else (s,) * n for s in settings]
    return tuple(tuple(s[d] for d in axis_order) for s in per_axis)


class _PoolMaxNd(TorchLayer):
    porter_layout = "channels_last"
    _pool_dims = 2

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False,
                 **kwargs):
        super().__init__(**kwargs)
        self.kernel_size, self.stride, self.padding = kernel_size, stride if stride is not None else kernel_size, \
            padding
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode
        self.finish_init()

    def call(self, x, axis_order=None):
        """`axis_order`: the torch spatial dims (0-based) x stores in its spatial axes, when not in torch's order."""
        kernel, stride, padding, dilation = _pool_in_axis_order(
            self._pool_dims, axis_order, self.kernel_size, self.stride, self.padding, self.dilation)
        return _pool_max(x, self._pool_dims, kernel, stride, padding, dilation, self.ceil_mode,
                         self.return_indices and axis_order is None, type(self).__name__)

    def get_config(self):
        return {**super().get_config(), "kernel_size": self.kernel_size, "stride": self.stride,
                "padding": self.padding, "dilation": self.dilation, "return_indices": self.return_indices,
                "ceil_mode": self.ceil_mode}


class MaxPool1d(_PoolMaxNd):
    """torch.nn.MaxPool1d on (N, L, C): -inf padding, dilation, ceil_mode."""

    _pool_dims = 1


class MaxPool2d(_PoolMaxNd):
    """torch.nn.MaxPool2d on (N, H, W, C): -inf padding, dilation, ceil_mode."""

    _pool_dims = 2


class MaxPool3d(_PoolMaxNd):
    """torch.nn.MaxPool3d on (N, D, H, W, C): -inf padding, dilation, ceil_mode."""

    _pool_dims = 3


def _max_unpool(x, indices, n, kernel_size, stride, padding, output_size, what):
    """torch's max_unpool on channels-last `x` and the `indices` its max pool gave (held alike): every value put at
    its index of its (n, c) plane of the output, zeros elsewhere."""
    spatial = _pool_spatial(x, n, what)
    kernel = _pool_tuple(kernel_size, n, "kernel_size")
    stride = kernel if stride is None else _pool_tuple(stride, n, "stride")
    padding = _pool_tuple(padding, n, "padding")
    if output_size is not None:  # (torch's sizes: the trailing n are the spatial ones)
        outs = tuple(int(size) for size in list(output_size)[-n:])
    else:
        outs = tuple((length - 1) * s - 2 * p + k for length, s, p, k in zip(spatial, stride, padding, kernel))
    shape = tf.shape(x)
    batch, channels = shape[0], shape[-1]
    values = tf.reshape(x, [batch, -1, channels])
    where = tf.cast(tf.reshape(indices, [batch, -1, channels]), tf.int32)
    at = tf.stack([tf.broadcast_to(tf.range(batch)[:, None, None], tf.shape(where)), where,
                   tf.broadcast_to(tf.range(channels)[None, None, :], tf.shape(where))], axis=-1)
    result = tf.tensor_scatter_nd_update(tf.zeros([batch, int(np.prod(outs)), channels], x.dtype), at, values)
    return tf.reshape(result, [batch, *outs, channels])


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, 1, kernel_size, stride, padding, output_size, "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, 2, kernel_size, stride, padding, output_size, "max_unpool2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, 3, kernel_size, stride, padding, output_size, "max_unpool3d")


class _MaxUnpoolNd(TorchLayer):
    porter_layout = "channels_last"
    _pool_dims = 2

    def __init__(self, kernel_size, stride=None, padding=0, **kwargs):
        super().__init__(**kwargs)
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.finish_init()

    def call(self, x, indices, output_size=None):
        return _max_unpool(x, indices, self._pool_dims, self.kernel_size, self.stride, self.padding, output_size,
                           type(self).__name__)

    def get_config(self):
        return {**super().get_config(), "kernel_size": self.kernel_size, "stride": self.stride,
                "padding": self.padding}


class MaxUnpool1d(_MaxUnpoolNd):
    """torch.nn.MaxUnpool1d on (N, L, C) and its MaxPool1d's indices."""

    _pool_dims = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """torch.nn.MaxUnpool2d on (N, H, W, C) and its MaxPool2d's indices."""

    _pool_dims = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """torch.nn.MaxUnpool3d on (N, D, H, W, C) and its MaxPool3d's indices."""

    _pool_dims = 3


class AvgPool1d(TorchLayer):
    """torch.nn.AvgPool1d on (N, L, C): zero padding, ceil_mode, count_include_pad."""

    porter_layout = "channels_last"

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, **kwargs):
        super().__init__(**kwargs)
        self.kernel_size, self.stride, self.padding = kernel_size, stride if stride is not None else kernel_size, \
            padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad
        self.finish_init()

    def call(self, x):
        return _pool_avg(x, 1, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                         None, "AvgPool1d")

    def get_config(self):
        return {**super().get_config(), "kernel_size": self.kernel_size, "stride": self.stride,
                "padding": self.padding, "ceil_mode": self.ceil_mode, "count_include_pad": self.count_include_pad}


class _PoolAvgNd(TorchLayer):
    porter_layout = "channels_last"
    _pool_dims = 2

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None, **kwargs):
        super().__init__(**kwargs)
        self.kernel_size, self.stride, self.padding = kernel_size, stride if stride is not None else kernel_size, \
            padding
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, \
            divisor_override
        self.finish_init()

    def call(self, x, axis_order=None):
        """`axis_order`: the torch spatial dims (0-based) x stores in its spatial axes, when not in torch's order."""
        kernel, stride, padding = _pool_in_axis_order(self._pool_dims, axis_order, self.kernel_size, self.stride,
                                                      self.padding)
        return _pool_avg(x, self._pool_dims, kernel, stride, padding, self.ceil_mode, self.count_include_pad,
                         self.divisor_override, type(self).__name__)

    def get_config(self):
        return {**super().get_config(), "kernel_size": self.kernel_size, "stride": self.stride,
                "padding": self.padding, "ceil_mode": self.ceil_mode, "count_include_pad": self.count_include_pad,
                "divisor_override": self.divisor_override}


class AvgPool2d(_PoolAvgNd):
    """torch.nn.AvgPool2d on (N, H, W, C): zero padding, ceil_mode, count_include_pad, divisor_override."""

    _pool_dims = 2


class AvgPool3d(_PoolAvgNd):
    """torch.nn.AvgPool3d on (N, D, H, W, C): zero padding, ceil_mode, count_include_pad, divisor_override."""

    _pool_dims = 3


class _PoolAdaptiveNd(TorchLayer):
    porter_layout = "channels_last"
    _pool_dims = 2
    _pool_mode = "avg"

    def __init__(self, output_size, return_indices=False, **kwargs):
        super().__init__(**kwargs)
        self.output_size, self.return_indices = output_size, return_indices
        self.finish_init()

    def call(self, x):
        if self.return_indices:  # (max pools only: values and indices, both channels-last)
            return _pool_adaptive_max_indices(x, self._pool_dims, self.output_size, type(self).__name__)
        return _pool_adaptive(x, self._pool_dims, self.output_size, self._pool_mode, type(self).__name__)

    def get_config(self):
        config = {**super().get_config(), "output_size": self.output_size}
        if self._pool_mode == "max":
            config["return_indices"] = self.return_indices
        return config


class _PoolAdaptiveAvgNd(_PoolAdaptiveNd):
    def __init__(self, output_size, **kwargs):
        super().__init__(output_size, **kwargs)


class AdaptiveAvgPool1d(_PoolAdaptiveAvgNd):
    """torch.nn.AdaptiveAvgPool1d on (N, L, C) (torch's floor/ceil bins, static sizes)."""

    _pool_dims = 1


class AdaptiveAvgPool2d(_PoolAdaptiveAvgNd):
    """torch.nn.AdaptiveAvgPool2d on (N, H, W, C); None entries keep the input size."""

    _pool_dims = 2


class AdaptiveAvgPool3d(_PoolAdaptiveAvgNd):
    """torch.nn.AdaptiveAvgPool3d on (N, D, H, W, C); None entries keep the input size."""

    _pool_dims = 3


class AdaptiveMaxPool1d(_PoolAdaptiveNd):
    """torch.nn.AdaptiveMaxPool1d on (N, L, C) (with return_indices: values and torch's indices)."""

    _pool_dims = 1
    _pool_mode = "max"


class AdaptiveMaxPool2d(_PoolAdaptiveNd):
    """torch.nn.AdaptiveMaxPool2d on (N, H, W, C) (with return_indices: values and torch's indices)."""

    _pool_dims = 2
    _pool_mode = "max"


class AdaptiveMaxPool3d(_PoolAdaptiveNd):
    """torch.nn.AdaptiveMaxPool3d on (N, D, H, W, C) (with return_indices: values and torch's indices)."""

    _pool_dims = 3
    _pool_mode = "max"


class Upsample(TorchLayer):
    """torch.nn.Upsample (F.interpolate) on channels-last input: nearest, nearest-exact, (bi/tri)linear, bicubic,
    area, with torch's index rules."""

    porter_layout = "channels_last"

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None, **kwargs):
        super().__init__(**kwargs)
        self.size = tuple(size) if isinstance(size, (list, tuple)) else size
        if isinstance(scale_factor, (list, tuple)):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners, self.recompute_scale_factor = mode, align_corners, recompute_scale_factor
        self.finish_init()

    def call(self, x):
        return _pool_interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                                 self.recompute_scale_factor, False)

    def get_config(self):
        return {**super().get_config(), "size": self.size, "scale_factor": self.scale_factor, "mode": self.mode,
                "align_corners": self.align_corners, "recompute_scale_factor": self.recompute_scale_factor}


class UpsamplingNearest2d(Upsample):
    """torch.nn.UpsamplingNearest2d: Upsample(mode='nearest')."""

    def __init__(self, size=None, scale_factor=None, **kwargs):
        super().__init__(size, scale_factor, mode="nearest", **kwargs)

    def get_config(self):
        config = super().get_config()
        for key in ("mode", "align_corners", "recompute_scale_factor"):
            config.pop(key)
        return config


class UpsamplingBilinear2d(Upsample):
    """torch.nn.UpsamplingBilinear2d: Upsample(mode='bilinear', align_corners=True)."""

    def __init__(self, size=None, scale_factor=None, **kwargs):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True, **kwargs)

    def get_config(self):
        config = super().get_config()
        for key in ("mode", "align_corners", "recompute_scale_factor"):
            config.pop(key)
        return config


class PixelShuffle(TorchLayer):
    """torch.nn.PixelShuffle on (N, H, W, C*r*r) -> (N, H*r, W*r, C), torch's channel order."""

    porter_layout = "channels_last"

    def __init__(self, upscale_factor, **kwargs):
        super().__init__(**kwargs)
        self.upscale_factor = upscale_factor
        self.finish_init()

    def call(self, x):
        return _pool_pixel_shuffle(x, self.upscale_factor)

    def get_config(self):
        return {**super().get_config(), "upscale_factor": self.upscale_factor}


class PixelUnshuffle(TorchLayer):
    """torch.nn.PixelUnshuffle on (N, H*r, W*r, C) -> (N, H, W, C*r*r), torch's channel order."""

    porter_layout = "channels_last"

    def __init__(self, downscale_factor, **kwargs):
        super().__init__(**kwargs)
        self.downscale_factor = downscale_factor
        self.finish_init()

    def call(self, x):
        return _pool_pixel_unshuffle(x, self.downscale_factor)

    def get_config(self):
        return {**super().get_config(), "downscale_factor": self.downscale_factor}


class _PoolPadNd(TorchLayer):
    """Base of the torch padding modules: `padding` is an int or torch's tuple (last torch dim first)."""

    porter_layout = "channels_last"
    _pool_dims = 2
    _pool_mode = "constant"

    def __init__(self, padding, value=0.0, **kwargs):
        super().__init__(**kwargs)
        # an int pads every side; a tuple is used as given, like torch (which passes it on to F.pad)
        self.padding = tuple(int(p) for p in padding) if isinstance(padding, (list, tuple)) \
            else (int(padding),) * (2 * self._pool_dims)
        self.value = value
        self.finish_init()

    def call(self, x, layout="channels_last"):
        """`x` channels-last, or in torch's order: told so (`layout="source"`), or torch's unbatched form (one dim
        fewer than a batch of images: (C, H, W) for a 2d pad)."""
        value = self.value if self._pool_mode == "constant" else None
        in_order = layout == "source" or len(x.shape) == self._pool_dims + 1
        return _pool_pad(x, self.padding, self._pool_mode, value, channels_last=not in_order)

    def get_config(self):
        return {**super().get_config(), "padding": self.padding}


class _PoolConstantPadNd(_PoolPadNd):
    def __init__(self, padding, value, **kwargs):
        super().__init__(padding, value, **kwargs)

    def get_config(self):
        return {**super().get_config(), "value": self.value}


class _PoolZeroPadNd(_PoolPadNd):
    def __init__(self, padding, **kwargs):
        super().__init__(padding, 0.0, **kwargs)


class _PoolReflectionPadNd(_PoolPadNd):
    _pool_mode = "reflect"

    def __init__(self, padding, **kwargs):
        super().__init__(padding, **kwargs)


class _PoolReplicationPadNd(_PoolPadNd):
    _pool_mode = "replicate"

    def __init__(self, padding, **kwargs):
        super().__init__(padding, **kwargs)


class _PoolCircularPadNd(_PoolPadNd):
    _pool_mode = "circular"

    def __init__(self, padding, **kwargs):
        super().__init__(padding, **kwargs)


class ZeroPad1d(_PoolZeroPadNd):
    """torch.nn.ZeroPad1d on (N, L, C)."""

    _pool_dims = 1


class ZeroPad2d(_PoolZeroPadNd):
    """torch.nn.ZeroPad2d on (N, H, W, C): padding (left, right, top, bottom)."""

    _pool_dims = 2


class ZeroPad3d(_PoolZeroPadNd):
    """torch.nn.ZeroPad3d on (N, D, H, W, C): padding (left, right, top, bottom, front, back)."""

    _pool_dims = 3


class ConstantPad1d(_PoolConstantPadNd):
    """torch.nn.ConstantPad1d on (N, L, C)."""

    _pool_dims = 1


class ConstantPad2d(_PoolConstantPadNd):
    """torch.nn.ConstantPad2d on (N, H, W, C)."""

    _pool_dims = 2


class ConstantPad3d(_PoolConstantPadNd):
    """torch.nn.ConstantPad3d on (N, D, H, W, C)."""

    _pool_dims = 3


class ReflectionPad1d(_PoolReflectionPadNd):
    """torch.nn.ReflectionPad1d on (N, L, C)."""

    _pool_dims = 1


class ReflectionPad2d(_PoolReflectionPadNd):
    """torch.nn.ReflectionPad2d on (N, H, W, C)."""

    _pool_dims = 2


class ReflectionPad3d(_PoolReflectionPadNd):
    """torch.nn.ReflectionPad3d on (N, D, H, W, C)."""

    _pool_dims = 3


class ReplicationPad1d(_PoolReplicationPadNd):
    """torch.nn.ReplicationPad1d on (N, L, C)."""

    _pool_dims = 1


class ReplicationPad2d(_PoolReplicationPadNd):
    """torch.nn.ReplicationPad2d on (N, H, W, C)."""

    _pool_dims = 2


class ReplicationPad3d(_PoolReplicationPadNd):
    """torch.nn.ReplicationPad3d on (N, D, H, W, C)."""

    _pool_dims = 3


class CircularPad1d(_PoolCircularPadNd):
    """torch.nn.CircularPad1d on (N, L, C)."""

    _pool_dims = 1


class CircularPad2d(_PoolCircularPadNd):
    """torch.nn.CircularPad2d on (N, H, W, C)."""

    _pool_dims = 2


class CircularPad3d(_PoolCircularPadNd):
    """torch.nn.CircularPad3d on (N, D, H, W, C)."""

    _pool_dims = 3
