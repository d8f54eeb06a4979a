"""MXNet's neural-network operators as Gluon code calls them through `F` (`mx.nd`/`mx.sym`): F.Pooling,
F.contrib.AdaptiveAvgPooling2D, F.pad, F.contrib.BilinearResize2D and F.UpSampling, on channels-last images.

Each takes mxnet's parameter names and defaults (Pooling's stride is 1 and its pad 0 when not given, not the
kernel; BilinearResize2D aligns corners unless told not to) and ignores `name=`. Images arrive channels-last (N,
*spatial, C); the tuples mxnet spells in its own (N, C, *spatial) order (pad_width) are read in that order.
"""

import tensorflow as tf

from porter.runtime.pool import _pool_adaptive, _pool_avg, _pool_interpolate, _pool_max, _pool_pad


def _gluon_tuple(value, n, default, what):
    """An mxnet Shape argument (an int, a tuple, or empty: `default` per axis) as a tuple of `n` ints."""
    if value is None or (isinstance(value, (tuple, list)) and len(value) == 0):
        return (default,) * n
    if isinstance(value, (tuple, list)):
        if len(value) != n:
            raise ValueError(f"{what}: {tuple(value)} does not have {n} entries")
        return tuple(int(v) for v in value)
    return (int(value),) * n


def gluon_pooling(data, kernel=(), pool_type="max", global_pool=False, cudnn_off=False,
                  pooling_convention="valid", stride=(), pad=(), p_value=None, count_include_pad=None, layout=None,
                  name=None):
    """F.Pooling: max or avg pooling over the spatial axes of a channels-last tensor (global_pool: to size 1).
    pooling_convention 'full' rounds the output size up (torch's ceil_mode)."""
    x = tf.convert_to_tensor(data)
    n = len(x.shape) - 2
    if layout is not None and layout not in ("NCW", "NCHW", "NCDHW"):
        raise NotImplementedError(f"Pooling: layout={layout!r} is not supported by porter yet")
    if pool_type not in ("max", "avg"):
        raise NotImplementedError(f"Pooling: pool_type={pool_type!r} is not supported by porter yet")
    if global_pool:
        reduce = tf.reduce_max if pool_type == "max" else tf.reduce_mean
        return reduce(x, axis=list(range(1, n + 1)), keepdims=True)
    if pooling_convention not in ("valid", "full"):
        raise NotImplementedError(f"Pooling: pooling_convention={pooling_convention!r} is not supported by porter")
    kernel = _gluon_tuple(kernel, n, None, "Pooling kernel")
    stride = _gluon_tuple(stride, n, 1, "Pooling stride")
    padding = _gluon_tuple(pad, n, 0, "Pooling pad")
    ceil_mode = pooling_convention == "full"
    if ceil_mode:
        _check_full_windows(x, kernel, stride, padding)
    if pool_type == "max":
        return _pool_max(x, n, kernel, stride, padding, 1, ceil_mode, False, "Pooling")
    include = True if count_include_pad is None else bool(count_include_pad)
    return _pool_avg(x, n, kernel, stride, padding, ceil_mode, include, None, "Pooling")


def _check_full_windows(x, kernel, stride, padding):
    """mxnet's 'full' convention keeps a last window that starts past the padded input, torch's ceil_mode drops it
    (a kernel smaller than its stride): refused rather than a different output size."""
    for axis, (k, s, p) in enumerate(zip(kernel, stride, padding)):
        length = x.shape[axis + 1]
        if length is None:
            continue
        windows = -(-(int(length) + 2 * p - k) // s) + 1
        if (windows - 1) * s >= int(length) + p:
            raise NotImplementedError(f"Pooling: pooling_convention='full' with a last window past the input "
                                      f"(size {length}, kernel {k}, stride {s}, pad {p}) is not supported by porter")


def gluon_adaptive_avg_pooling2d(data, output_size=(), name=None):
    """F.contrib.AdaptiveAvgPooling2D: torch's adaptive average bins; output_size an int, (h, w), or empty (1)."""
    x = tf.convert_to_tensor(data)
    if isinstance(output_size, (tuple, list)) and len(output_size) == 0:
        output_size = 1
    return _pool_adaptive(x, 2, output_size, "avg", "AdaptiveAvgPooling2D")


def gluon_pad(data, mode, pad_width, constant_value=0.0, name=None):
    """F.pad(data, mode, pad_width, constant_value) on a channels-last 4-D/5-D tensor: pad_width holds (before,
    after) per axis in mxnet's (N, C, *spatial) order; mode 'constant', 'edge' or 'reflect'."""
    x = tf.convert_to_tensor(data)
    widths = [int(w) for w in pad_width]
    rank = len(x.shape)
    if len(widths) != 2 * rank:
        raise ValueError(f"pad: pad_width has {len(widths)} entries, a rank-{rank} input takes {2 * rank}")
    if any(widths[:4]):
        raise NotImplementedError("pad: mxnet pads only the spatial axes (the first four pad_width entries are 0)")
    modes = {"constant": "constant", "edge": "replicate", "reflect": "reflect"}
    if mode not in modes:
        raise ValueError(f"pad: unknown mode {mode!r} (mxnet takes constant, edge, reflect)")
    spatial = [widths[2 * axis:2 * axis + 2] for axis in range(2, rank)]
    torch_pad = [w for pair in reversed(spatial) for w in pair]  # torch's order: last axis first
    return _pool_pad(x, torch_pad, modes[mode], constant_value if mode == "constant" else None)


def _gluon_spatial(x):
    return [x.shape[axis] if x.shape[axis] is not None else tf.shape(x)[axis] for axis in (1, 2)]


def gluon_bilinear_resize2d(data, like=None, height=1, width=1, scale_height=None, scale_width=None, mode="size",
                            align_corners=True, like_channels_last=False, name=None):
    """F.contrib.BilinearResize2D on a channels-last image: to (height, width), by (scale_height, scale_width), or
    to the spatial size of `like` (mode 'like'; `like_channels_last` says how `like` lies)."""
    x = tf.convert_to_tensor(data)
    in_height, in_width = _gluon_spatial(x)
    if mode == "like":
        if like is None:
            raise ValueError("BilinearResize2D: mode='like' needs `like`")
        like = tf.convert_to_tensor(like)
        size = _gluon_spatial(like) if like_channels_last else [
            like.shape[axis] if like.shape[axis] is not None else tf.shape(like)[axis] for axis in (2, 3)]
    elif mode == "size":
        if scale_height is not None and scale_width is not None:
            size = [int(in_height * scale_height), int(in_width * scale_width)]
        else:
            size = [int(height), int(width)]
    else:
        raise NotImplementedError(f"BilinearResize2D: mode={mode!r} is not supported by porter yet")
    # mxnet's scale for an output of size 1 is 0 whether or not corners align: the first row (column) is taken
    if isinstance(size[0], int) and size[0] == 1:
        x = x[:, :1]
    if isinstance(size[1], int) and size[1] == 1:
        x = x[:, :, :1]
    return _pool_interpolate(x, tuple(size), None, "bilinear", bool(align_corners), None, False)


def gluon_upsampling(*data, scale, sample_type="nearest", num_args=1, num_filter=0, multi_input_mode="concat",
                     workspace=512, name=None):
    """F.UpSampling(x, scale=s, sample_type='nearest'): each pixel repeated s times along both spatial axes of a
    channels-last image (one input; bilinear upsampling takes a learned deconvolution weight: not supported)."""
    if sample_type != "nearest" or len(data) != 1:
        raise NotImplementedError("UpSampling: only sample_type='nearest' with one input is supported by porter yet")
    x = tf.convert_to_tensor(data[0])
    scale = int(scale)
    for axis in (1, 2):
        x = tf.repeat(x, scale, axis=axis)
    return x


def gluon_slice(data, begin, end, step=(), name=None):
    """F.slice(data, begin, end, step): per axis, entries begin..end-1 by step (None: the default; axes past the
    tuples' length are whole). The tuples are in the order the tensor lies (the rule reorders them for a
    channels-last tensor)."""
    x = tf.convert_to_tensor(data)
    step = tuple(step) if step else ()
    index = []
    for axis in range(len(begin)):
        stride = step[axis] if axis < len(step) and step[axis] is not None else 1
        index.append(slice(begin[axis], end[axis] if axis < len(end) else None, stride))
    return x[tuple(index)]


def gluon_ones_like(data, name=None):
    """F.ones_like: ones of `data`'s shape and dtype (in whatever layout it lies)."""
    return tf.ones_like(tf.convert_to_tensor(data))


def gluon_zeros_like(data, name=None):
    """F.zeros_like: zeros of `data`'s shape and dtype (in whatever layout it lies)."""
    return tf.zeros_like(tf.convert_to_tensor(data))


def gluon_shared_dropout(data, p=0.5, axes=(), training=None):
    """F.Dropout(axes=...): one dropout mask shared along `axes` (variational dropout over time), the kept values
    scaled by 1 / (1 - p) as in mxnet; the data unchanged outside training."""
    x = tf.convert_to_tensor(data)
    if not training or not p:
        return x
    rank = len(x.shape)
    shared = {axis % rank for axis in (axes if isinstance(axes, (tuple, list)) else (axes,))}
    shape = tf.shape(x)
    noise_shape = tf.stack([1 if axis in shared else shape[axis] for axis in range(rank)])
    return tf.nn.dropout(x, rate=p, noise_shape=noise_shape)
