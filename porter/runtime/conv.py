"""torch.nn.Conv1d/2d/3d, ConvTranspose1d/2d/3d and F.conv*/F.conv_transpose* as channels-last Keras layers.

Layout: inputs and outputs are channels-last ((N, L, C), (N, H, W, C), (N, D, H, W, C)).

Kernels (module classes) are stored in the layout the TF op wants, so no Transpose op enters the graph:
- Conv{1,2,3}d: (k..., in_channels / groups, out_channels), the Keras/TF "HWIO" layout; torch (O, I/g, k...) is
  transposed once when weights are loaded.
- ConvTranspose{1,2,3}d with groups == 1 and dilation 1: (k..., out_channels, in_channels), the Keras
  Conv*DTranspose layout used by tf.nn.conv*_transpose.
- ConvTranspose with groups > 1 or dilation > 1: stored as the equivalent *forward* convolution kernel
  (k... flipped, in_channels / groups, out_channels), run as a stride-1 convolution of the zero-upsampled input.
  (TF's transposed-conv kernels reject groups, and dilation without oneDNN, on CPU.)

Padding: torch pads symmetrically; it is applied with tf.pad (or concat for 'replicate'/'circular') followed by a
'VALID' convolution, except where TF's 'SAME' pads exactly like torch (stride 1, total padding d*(k-1) split
floor/ceil), which avoids the Pad op.

Groups: tf.nn.conv2d takes grouped kernels natively (input channels = groups * kernel in-channels) on CPU (with
or without oneDNN) and under XLA (GPU/cuDNN supports it too; not checked here), and handles depthwise (groups == in_channels, any multiplier), strides and
dilations together; tf.nn.depthwise_conv2d does not (it is wrong for stride > 1 with dilation > 1 and rejects
unequal strides or dilations without oneDNN). Conv1d runs as Conv2d on a height-1 image. Grouped Conv3d is not
supported by TF's CPU kernel, and TF's Conv3D shape function swaps the H and W dilations (a wrong static shape when
they differ), so those cases are computed as a sum over the kernel's depth taps of (grouped) 2-D convolutions.
Under XLA on a CPU-only host a depthwise convolution (in_channels / groups == 1) is a sum over the kernel taps of
strided slices times per-channel weights: XLA's CPU backend would run it as a dense convolution (groups times the
work); the TF graph keeps oneDNN's depthwise kernel.
"""

import numpy as np
import tensorflow as tf

from porter.runtime.base import StateEntry, TorchLayer, to_channels_first, to_channels_last, uniform_fan_in

_CONV_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _conv_tuple(value, n, what="argument"):
    """torch's _ntuple: an int repeated n times, or a sequence of n ints (a 1-element sequence is expanded)."""
    if isinstance(value, (list, tuple)):
        value = tuple(int(v) for v in value)
        if len(value) == 1:
            value = value * n
        if len(value) != n:
            raise ValueError(f"expected {n} values for {what}, got {value}")
        return value
    return (int(value),) * n


def _conv_dims(x):
    """Shape of `x` as a list: static ints where known, scalar tensors where not."""
    static = x.shape.as_list()
    if all(size is not None for size in static):
        return static
    dynamic = tf.shape(x)
    return [size if size is not None else dynamic[i] for i, size in enumerate(static)]


def _conv_forward_pads(padding, kernel_size, stride, dilation):
    """torch's (before, after) zero padding per spatial axis for a forward convolution."""
    n = len(kernel_size)
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * n
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            totals = [d * (k - 1) for k, d in zip(kernel_size, dilation)]
            return [(total // 2, total - total // 2) for total in totals]
        raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
    padding = _conv_tuple(padding, n, "padding")
    if any(p < 0 for p in padding):
        raise ValueError("negative padding is not supported")
    return [(p, p) for p in padding]


def _conv_pad(x, pads, mode="zeros"):
    """Pad the spatial axes of channels-last `x` by (before, after) per axis, torch padding_mode semantics.

    Negative amounts (zeros mode only) crop.
    """
    if all(lo == 0 and hi == 0 for lo, hi in pads):
        return x
    if mode == "zeros":
        if any(lo < 0 or hi < 0 for lo, hi in pads):
            x = x[(slice(None),) + tuple(slice(-lo if lo < 0 else 0, hi if hi < 0 else None) for lo, hi in pads)]
            pads = [(max(lo, 0), max(hi, 0)) for lo, hi in pads]
        if all(lo == 0 and hi == 0 for lo, hi in pads):
            return x
        return tf.pad(x, [[0, 0]] + [[lo, hi] for lo, hi in pads] + [[0, 0]])
    if mode == "reflect":
        return tf.pad(x, [[0, 0]] + [[lo, hi] for lo, hi in pads] + [[0, 0]], mode="REFLECT")
    if mode not in ("replicate", "circular"):
        raise ValueError(f"padding_mode must be one of {_CONV_PADDING_MODES}, got {mode!r}")
    for axis, (lo, hi) in enumerate(pads, start=1):
        if lo == 0 and hi == 0:
            continue
        lead = (slice(None),) * axis
        if mode == "replicate":
            parts = [x[lead + (slice(0, 1),)]] * lo + [x] + [x[lead + (slice(-1, None),)]] * hi
        else:
            size = x.shape[axis]
            if size is not None and (lo > size or hi > size):
                raise ValueError("circular padding larger than the input size is not supported")
            parts = ([x[lead + (slice(-lo, None),)]] if lo else []) + [x] + ([x[lead + (slice(0, hi),)]] if hi else [])
        x = tf.concat(parts, axis=axis)
    return x


def _conv3d_by_taps(x, kernel, stride, dilation, conv2d):
    """'VALID' (grouped) 3-D convolution as a sum over the depth taps of (grouped) 2-D convolutions, each run by
    `conv2d` (tf.nn.conv2d, or its portable stand-in where the host's kernels lack the gradient)."""
    dims = _conv_dims(x)
    depth_taps = kernel.shape[0]
    out_depth = (dims[1] - dilation[0] * (depth_taps - 1) - 1) // stride[0] + 1
    total = None
    for tap in range(depth_taps):
        start = tap * dilation[0]
        planes = x[:, start:start + (out_depth - 1) * stride[0] + 1:stride[0]]
        planes = tf.reshape(planes, [-1, dims[2], dims[3], dims[4]])
        y = conv2d(planes, kernel[tap], [1, stride[1], stride[2], 1], "VALID", dilations=[1, dilation[1], dilation[2], 1])
        total = y if total is None else total + y
    out = _conv_dims(total)
    return tf.reshape(total, [-1, out_depth, out[1], out[2], out[3]])


def _conv_xla_on_cpu():
    """Whether the ops being traced will be compiled by XLA for the CPU: a jit_compile trace, no GPU/TPU visible."""
    if tf.executing_eagerly():
        return False
    try:  # where TF itself tells a jit_compile trace from a plain one
        from tensorflow.python.ops import control_flow_util
    except ImportError:  # a TF without it: depthwise convolutions run natively
        return False
    if not control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph()):
        return False
    return not (tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("TPU"))


def _conv_depthwise_outputs(x, kernel, stride, dilation):
    """The static output sizes of a 'VALID' depthwise convolution of x, or None (unknown sizes, empty output)."""
    n = len(stride)
    sizes = x.shape[1:1 + n]
    if any(size is None for size in sizes):
        return None
    outs = [(size - d * (k - 1) - 1) // s + 1 for size, k, s, d in zip(sizes, kernel.shape[:n], stride, dilation)]
    return outs if min(outs) >= 1 else None


def _conv_depthwise_by_taps(x, kernel, stride, dilation, outs):
    """'VALID' depthwise convolution (groups == in_channels, any multiplier) as a sum over the kernel taps of a
    strided slice of x times that tap's per-channel weights.

    XLA's CPU backend runs a grouped convolution as a dense one with a block-diagonal kernel (groups times the work:
    a MobileNet block ~70x slower than oneDNN's depthwise kernel); these elementwise terms fuse into one XLA loop
    and cost what the depthwise convolution itself costs. The gradients are written out too (`_conv_depthwise_taps`).
    """
    n = len(stride)
    multiplier = kernel.shape[-1] // x.shape[-1]
    if multiplier > 1:  # output channel c * multiplier + m reads input channel c
        x = tf.repeat(x, multiplier, axis=-1)
    weights = tf.reshape(kernel, list(kernel.shape[:n]) + [kernel.shape[-1]])  # (k..., channels)
    return _conv_depthwise_taps(x, weights, tuple(stride), tuple(dilation), tuple(outs))


def _conv_tap_windows(kernel_size, stride, dilation, outs):
    """(tap index, the slice of the input that tap multiplies) for every tap of a 'VALID' convolution."""
    for tap in np.ndindex(*kernel_size):
        window = tuple(slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, o, s in zip(tap, dilation, outs, stride))
        yield tap, (slice(None),) + window


def _conv_depthwise_taps(x, weights, stride, dilation, outs):
    """y = sum over taps t of x[window t] * weights[t] (x and y have the same channels), with explicit gradients:
    autodiff's (one scatter per tap for x, one reduction per tap for the weights) ran 5-10x slower under XLA."""
    n = len(stride)
    kernel_size = tuple(weights.shape[:n])

    @tf.custom_gradient
    def depthwise(x, weights):
        total = None
        for tap, window in _conv_tap_windows(kernel_size, stride, dilation, outs):
            term = x[window] * weights[tap]
            total = term if total is None else total + term

        def gradient(dy):
            return (_conv_depthwise_input_gradient(dy, weights, x.shape[1:1 + n], stride, dilation),
                    _conv_depthwise_weight_gradient(x, dy, kernel_size, stride, dilation, outs))

        return total, gradient

    return depthwise(x, weights)


def _conv_depthwise_input_gradient(dy, weights, sizes, stride, dilation):
    """dx[i] = sum over taps t of up[i - t*d] * weights[t], up being dy with stride-1 zeros between samples: a tap
    sum over slices of one padded tensor (fuses into one XLA loop)."""
    n = len(stride)
    kernel_size = weights.shape[:n]
    up = _conv_zero_upsample(dy, stride)
    reach = [d * (k - 1) for k, d in zip(kernel_size, dilation)]
    # inputs past the last window get no gradient: pad up to the input size + reach on each side
    tails = [size - r - length for size, r, length in zip(sizes, reach, up.shape[1:1 + n])]
    padded = tf.pad(up, [[0, 0]] + [[r, r + tail] for r, tail in zip(reach, tails)] + [[0, 0]])
    total = None
    for tap in np.ndindex(*kernel_size):
        window = tuple(slice(r - t * d, r - t * d + size) for r, t, d, size in zip(reach, tap, dilation, sizes))
        term = padded[(slice(None),) + window] * weights[tap]
        total = term if total is None else total + term
    return total


def _conv_depthwise_weight_gradient(x, dy, kernel_size, stride, dilation, outs):
    """dweights[t] = sum over batch and positions of x[window t] * dy. A 2-D case with equal strides and no dilation
    uses TF's DepthwiseConv2dNativeBackpropFilter (3x faster under XLA than per-tap reductions)."""
    n = len(stride)
    channels = x.shape[-1]
    if n == 2 and stride[0] == stride[1] and dilation == (1, 1):
        grad = tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(
            input=x, filter_sizes=[*kernel_size, channels, 1], out_backprop=dy, strides=[1, *stride, 1],
            padding="VALID")
        return tf.reshape(grad, [*kernel_size, channels])
    axes = list(range(n + 1))
    taps = [tf.reduce_sum(x[window] * dy, axis=axes) for _, window in
            _conv_tap_windows(kernel_size, stride, dilation, outs)]
    return tf.reshape(tf.stack(taps), [*kernel_size, channels])


def _conv_single_window(x, kernel_size, stride, dilation):
    """(x, stride) for a 'VALID' convolution with the rows no window reaches cropped off (the output is the same),
    and every axis that has room for one window only cropped to that window, stride 1.

    oneDNN's CPU kernels go wrong at both: its Conv2D returns garbage when a stride exceeds the input's extent
    (width 2, kernel 2, stride 3), and the backward pass of its grouped convolutions corrupts the heap when a strided
    window leaves rows over (timm's fastvit: a 7x7 stride-2 depthwise conv of a 62-wide padded input, 28 windows
    reaching 61; the process aborted in a later allocation).
    """
    n = len(stride)
    window = []
    new_stride = list(stride)
    for axis in range(n):
        size, reach = x.shape[1 + axis], dilation[axis] * (kernel_size[axis] - 1) + 1
        if size is None or stride[axis] == 1 or size < reach:
            window.append(slice(None))
        elif size < reach + stride[axis]:
            window.append(slice(0, reach))
            new_stride[axis] = 1
        else:
            used = (size - reach) // stride[axis] * stride[axis] + reach
            window.append(slice(0, used) if used < size else slice(None))
    if new_stride == list(stride) and all(w == slice(None) for w in window):
        return x, stride
    return x[(slice(None), *window)], tuple(new_stride)


def _conv_forward(x, kernel, bias, stride, pads, dilation, groups, padding_mode="zeros"):
    """Convolution of channels-last `x` with an HWIO kernel (k..., in/groups, out), torch semantics.

    `pads` is (before, after) per spatial axis (negative crops; zeros mode only). Bias is a BiasAdd op, which
    grappler fuses into the convolution (with a following BatchNorm/ReLU) on CPU.
    """
    n = len(stride)
    kernel = tf.cast(kernel, x.dtype)
    kernel_size = kernel.shape[:n]
    if groups > 1 and kernel.shape[n] == 1 and _conv_xla_on_cpu():
        padded = _conv_pad(x, pads, padding_mode)
        outs = _conv_depthwise_outputs(padded, kernel, stride, dilation)
        if outs is not None:
            y = _conv_depthwise_by_taps(padded, kernel, stride, dilation, outs)
            return y if bias is None else tf.nn.bias_add(y, tf.cast(bias, y.dtype))
    # TF's CPU Conv3D rejects groups, and its graph shape function swaps the H and W dilations: those run as a
    # sum of 2-D convolutions over the depth taps (which also needs explicit padding).
    by_taps = n == 3 and (groups > 1 or dilation[1] != dilation[2] or (
        max(dilation) > 1 and not _conv_xla_on_cpu() and not _gradients_native("dilated3d", x.dtype)))
    same = (padding_mode == "zeros" and not by_taps and all(s == 1 for s in stride)
            and any(lo or hi for lo, hi in pads)
            and all(lo == d * (k - 1) // 2 and hi == d * (k - 1) - d * (k - 1) // 2
                    for (lo, hi), k, d in zip(pads, kernel_size, dilation)))
    if same:
        padding = "SAME"
    else:
        x = _conv_pad(x, pads, padding_mode)
        padding = "VALID"
        x, stride = _conv_single_window(x, kernel_size, stride, dilation)
    portable = not _conv_xla_on_cpu() and (
        groups > 1 and not _gradients_native("grouped", x.dtype) or
        max(dilation) > 1 and not _gradients_native("dilated", x.dtype))
    conv2d = _conv2d_by_groups if portable else tf.nn.conv2d
    if n == 1:
        y = conv2d(tf.expand_dims(x, 1), tf.expand_dims(kernel, 0), [1, 1, stride[0], 1], padding,
                   dilations=[1, 1, dilation[0], 1])
        y = tf.squeeze(y, 1)
    elif n == 2:
        y = conv2d(x, kernel, [1, *stride, 1], padding, dilations=[1, *dilation, 1])
    elif not by_taps:
        y = tf.nn.conv3d(x, kernel, [1, *stride, 1], padding, dilations=[1, *dilation, 1])
    else:
        y = _conv3d_by_taps(x, kernel, stride, dilation, conv2d)
    if bias is not None:
        y = tf.nn.bias_add(y, tf.cast(bias, y.dtype))
    return y


_NATIVE_GRADIENTS = {}  # ("grouped" / "dilated" / "dilated3d", dtype) -> whether TF differentiates it here (probed once)
_PROBES = {"grouped": ([1, 1, 1, 2], [1, 1, 1, 2], [1, 1, 1, 2], [1, 1, 1, 1]),  # input, filter, grad, dilations
           "dilated": ([1, 3, 3, 1], [2, 2, 1, 1], [1, 1, 1, 1], [1, 2, 2, 1]),
           "dilated3d": ([1, 3, 3, 3, 1], [2, 2, 2, 1, 1], [1, 1, 1, 1, 1], [1, 2, 2, 2, 1])}


def _gradients_native(kind, dtype=tf.float32):
    """Whether TF's convolution of this kind ("grouped", "dilated" conv2d, "dilated3d" conv3d) in `dtype` has
    gradients here (oneDNN's CPU kernels differentiate a grouped float32 conv, not a float64 one).
    Its CPU kernels without oneDNN compute a grouped or dilated conv2d's forward pass but reject the backward one
    ("Gradients for grouped convolutions are not supported on CPU", "do not yet support dilation rates larger than
    1"), and reject a dilated Conv3D outright, which would stop training (and `porter verify`'s gradient check) of
    such a conv on that host; GPUs, TPUs and XLA have them."""
    key = (kind, tf.as_dtype(dtype).name)
    if key not in _NATIVE_GRADIENTS:
        native = bool(tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("TPU"))
        if not native:
            sizes, kernel, grad, dilations = _PROBES[kind]
            with tf.init_scope(), tf.device("/CPU:0"):
                backprop = tf.raw_ops.Conv3DBackpropInputV2 if len(sizes) == 5 else tf.raw_ops.Conv2DBackpropInput
                try:  # (the op such a conv's gradient runs; init_scope pauses tapes, so no tape here)
                    backprop(input_sizes=sizes, filter=tf.ones(kernel, dtype), out_backprop=tf.ones(grad, dtype),
                             strides=[1] * len(sizes), padding="VALID", dilations=dilations)
                    native = True
                except (tf.errors.InvalidArgumentError, tf.errors.UnimplementedError):
                    native = False
        _NATIVE_GRADIENTS[key] = native
    return _NATIVE_GRADIENTS[key]


def _conv2d_by_groups(x, kernel, strides, padding, dilations):
    """tf.nn.conv2d of an HWIO kernel (in/groups input channels) without TF's grouped or dilated kernels, so that it
    has gradients on a CPU host lacking them: a dilation (stride 1) by space-to-batch; a depthwise kernel (one input
    channel a group) as tf.nn.depthwise_conv2d where that op takes the strides; any other grouped one as one
    convolution per group, concatenated. A strided dilated one ('VALID') keeps every stride-th output of the
    stride-1 convolution."""
    if max(dilations) > 1 and max(strides) > 1 and padding == "VALID":  # every stride-th output of a stride-1 one
        return _conv2d_by_groups(x, kernel, [1, 1, 1, 1], padding, dilations)[:, ::strides[1], ::strides[2]]
    if max(dilations) > 1 and max(strides) == 1:  # (atrous by space-to-batch: the plain kernels differentiate it)
        return tf.nn.with_space_to_batch(x, list(dilations[1:3]), padding, lambda piece, _, inner: _conv2d_by_groups(
            piece, kernel, strides, inner, [1, 1, 1, 1]), filter_shape=list(kernel.shape[:2]))
    in_channels, per_group, out_channels = x.shape[-1], kernel.shape[2], kernel.shape[3]
    groups = in_channels // per_group
    if groups == 1:
        return tf.nn.conv2d(x, kernel, strides, padding, dilations=dilations)
    if per_group == 1 and strides[1] == strides[2] and (strides[1] == 1 or max(dilations) == 1):
        depthwise = tf.reshape(kernel, [kernel.shape[0], kernel.shape[1], in_channels, out_channels // in_channels])
        return tf.nn.depthwise_conv2d(x, depthwise, strides, padding, dilations=dilations[1:3])
    pieces = zip(tf.split(x, groups, axis=-1), tf.split(kernel, groups, axis=-1))
    return tf.concat([tf.nn.conv2d(xg, kg, strides, padding, dilations=dilations) for xg, kg in pieces], axis=-1)


def _conv_transpose_is_native(groups, dilation):
    """True when the transposed convolution runs on tf.nn.conv*_transpose (TF CPU kernels need groups == 1 and
    dilation 1); otherwise it runs as a forward convolution of the zero-upsampled input."""
    return groups == 1 and all(d == 1 for d in dilation)


def _conv_transpose_output_padding(x, output_size, kernel_size, stride, padding, output_padding, dilation):
    """torch's ConvTranspose._output_padding: the output_padding that yields `output_size` (or the given one)."""
    if output_size is None:
        return output_padding
    n = len(kernel_size)
    output_size = [int(v) for v in output_size][-n:]
    if len(output_size) != n:
        raise ValueError(f"output_size must have {n} or {n + 2} elements")
    result = []
    for axis in range(n):
        size = x.shape[1 + axis]
        if size is None:
            raise ValueError("output_size needs static spatial input sizes")
        smallest = (size - 1) * stride[axis] - 2 * padding[axis] + dilation[axis] * (kernel_size[axis] - 1) + 1
        if not smallest <= output_size[axis] < smallest + stride[axis]:
            raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {smallest} "
                             f"to {smallest + stride[axis] - 1} on axis {axis}")
        result.append(output_size[axis] - smallest)
    return tuple(result)


def _conv_zero_upsample(x, stride):
    """Insert stride-1 zeros between neighbours on each spatial axis: length L -> (L - 1) * stride + 1."""
    for axis, s in enumerate(stride, start=1):
        if s == 1:
            continue
        dims = _conv_dims(x)
        y = tf.expand_dims(x, axis + 1)
        y = tf.pad(y, [[0, 0]] * (axis + 1) + [[0, s - 1]] + [[0, 0]] * (len(dims) - axis - 1))
        shape = [-1] + dims[1:axis] + [dims[axis] * s] + dims[axis + 1:]
        y = tf.reshape(y, shape)
        x = y[(slice(None),) * axis + (slice(0, (dims[axis] - 1) * s + 1),)]
    return x


def _conv_transpose_native(x, kernel, stride, padding, output_padding):
    """Transposed convolution, groups 1 and dilation 1, kernel (k..., out, in), via tf.nn.conv*_transpose."""
    n = len(stride)
    kernel = tf.cast(kernel, x.dtype)
    dims = _conv_dims(x)
    kernel_size = kernel.shape[:n]
    full = [(dims[1 + i] - 1) * stride[i] + kernel_size[i] for i in range(n)]
    # TF accepts an output up to stride - 1 longer than the minimum (zeros there); output_padding < stride here.
    longer = [full[i] + max(0, output_padding[i] - padding[i]) for i in range(n)]
    channels = kernel.shape[n]
    if n == 1:
        y = tf.nn.conv2d_transpose(tf.expand_dims(x, 1), tf.expand_dims(kernel, 0), [dims[0], 1, longer[0], channels],
                                   [1, 1, stride[0], 1], "VALID")
        y = tf.squeeze(y, 1)
    elif n == 2:
        y = tf.nn.conv2d_transpose(x, kernel, [dims[0], *longer, channels], [1, *stride, 1], "VALID")
    else:
        y = tf.nn.conv3d_transpose(x, kernel, [dims[0], *longer, channels], [1, *stride, 1], "VALID")
    if all(p == 0 for p in padding):
        return y  # already (L - 1) * stride + k + output_padding long
    return y[(slice(None),) + tuple(slice(padding[i], full[i] - padding[i] + output_padding[i]) for i in range(n))]


def _conv_transpose_forward(x, kernel, stride, padding, output_padding, dilation, groups):
    """Transposed convolution as a stride-1 convolution of the zero-upsampled input with a flipped forward kernel
    (k..., in/groups, out) (any groups and dilation)."""
    n = len(stride)
    kernel_size = kernel.shape[:n]
    x = _conv_zero_upsample(x, stride)
    pads = [(dilation[i] * (kernel_size[i] - 1) - padding[i],
             dilation[i] * (kernel_size[i] - 1) - padding[i] + output_padding[i]) for i in range(n)]
    return _conv_forward(x, kernel, None, (1,) * n, pads, dilation, groups)


def _conv_transpose(x, kernel, bias, stride, padding, output_padding, dilation, groups, native):
    """Transposed convolution of channels-last `x`, torch semantics; `native` picks the kernel layout (see module)."""
    if native:
        y = _conv_transpose_native(x, kernel, stride, padding, output_padding)
    else:
        y = _conv_transpose_forward(x, kernel, stride, padding, output_padding, dilation, groups)
    if bias is not None:
        y = y + tf.cast(bias, y.dtype)
    return y


def _conv_torch_to_hwio(weight):
    """torch forward kernel (O, I/g, k...) -> (k..., I/g, O) (numpy)."""
    rank = weight.ndim
    return np.transpose(weight, list(range(2, rank)) + [1, 0])


def _conv_transpose_torch_to_forward(weight, groups):
    """torch transposed kernel (I, O/g, k...) -> equivalent forward kernel, spatially flipped, (k..., I/g, O)."""
    in_channels, out_per_group = weight.shape[:2]
    spatial = weight.shape[2:]
    n = len(spatial)
    w = np.reshape(weight, (groups, in_channels // groups, out_per_group) + tuple(spatial))
    w = np.transpose(w, [3 + i for i in range(n)] + [1, 0, 2])  # (k..., I/g, g, O/g)
    w = np.reshape(w, tuple(spatial) + (in_channels // groups, groups * out_per_group))
    return np.ascontiguousarray(w[(slice(None, None, -1),) * n])


class _ConvNd(TorchLayer):
    """Shared constructor/state of the forward convolutions (Conv1d/2d/3d)."""

    porter_layout = "channels_last"
    _conv_rank = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        n = self._conv_rank
        if groups <= 0 or out_channels % groups:
            raise ValueError("in_channels and out_channels must be divisible by groups (a positive integer)")
        if padding_mode not in _CONV_PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_CONV_PADDING_MODES}, got {padding_mode!r}")
        self._conv_config = {"in_channels": in_channels, "out_channels": out_channels, "kernel_size": kernel_size,
                             "stride": stride, "padding": padding, "dilation": dilation, "groups": groups,
                             "bias": bias, "padding_mode": padding_mode}
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _conv_tuple(kernel_size, n, "kernel_size")
        self.stride = _conv_tuple(stride, n, "stride")
        self.dilation = _conv_tuple(dilation, n, "dilation")
        self.padding = padding if isinstance(padding, str) else _conv_tuple(padding, n, "padding")
        self.padding_mode = padding_mode
        self._conv_pads = _conv_forward_pads(self.padding, self.kernel_size, self.stride, self.dilation)
        # a 1x1 convolution, stride 1, no padding, one group: a matmul over whichever axis holds the channels
        self._pointwise = groups == 1 and all(k == 1 for k in self.kernel_size) and \
            all(s == 1 for s in self.stride) and all(p == (0, 0) for p in self._conv_pads)
        self.weight = self.bias = None
        if in_channels is not None:  # None: a Lazy convolution (runtime/lazy.py), made at its first call
            self.make_weights(in_channels)
            self.finish_init()

    def make_weights(self, in_channels):
        """The HWIO kernel and bias, torch's init; the Lazy convolutions call it once the input gives
        `in_channels`."""
        if in_channels % self.groups:
            raise ValueError("in_channels and out_channels must be divisible by groups (a positive integer)")
        self.in_channels = self._conv_config["in_channels"] = in_channels
        init = uniform_fan_in(in_channels // self.groups * int(np.prod(self.kernel_size)))
        self.weight = self.add_weight(shape=self.kernel_size + (in_channels // self.groups, self.out_channels),
                                      initializer=init, name="weight")
        self.bias = self.add_weight(shape=(self.out_channels,), initializer=init, name="bias") \
            if self._conv_config["bias"] else None
        self.weight.porter_torch_view = ((self.out_channels, in_channels // self.groups) + self.kernel_size,
                                         _conv_torch_to_hwio)

    def reset_parameters(self):
        """torch's reset_parameters: the kernel and bias drawn again from torch's default init (a subclass's own
        reset_parameters calls it through super(): timm's ScaledStdConv2d)."""
        init = uniform_fan_in(self.in_channels // self.groups * int(np.prod(self.kernel_size)))
        for variable in (self.weight, self.bias):
            if variable is not None:
                variable.assign(init(variable.shape, variable.dtype))

    def call(self, x, layout=None, layout_out=None):
        """`layout` / `layout_out`: the layouts a container holds `x` in and wants the result in (see `runs_in`);
        by default channels-last. A 1x1 convolution on torch's order contracts axis 1 in place (MLP-Mixer's token
        mixing: a Conv1d over the tokens of a (b, n, c) sequence moves no data)."""
        if layout == "source" and self._pointwise:
            y = tf.einsum("nc...,co->no...", x, tf.cast(tf.reshape(self.weight, (self.in_channels,
                                                                                 self.out_channels)), x.dtype))
            if self.bias is not None:
                y = y + tf.reshape(tf.cast(self.bias, y.dtype), (self.out_channels,) + (1,) * self._conv_rank)
            return to_channels_last(y) if layout_out == "channels_last" else y
        y = _conv_forward(to_channels_last(x) if layout == "source" else x, self.weight, self.bias, self.stride,
                          self._conv_pads, self.dilation, self.groups, self.padding_mode)
        return to_channels_first(y) if layout_out == "source" else y

    def runs_in(self, layout):
        """Channels-last always; torch's order too for a 1x1 convolution (not a subclass with a forward of its
        own)."""
        return type(self).call is _ConvNd.call and (layout == "channels_last" or self._pointwise)

    def torch_state(self, prefix=""):
        # (a subclass replacing the kernel by a parameter of another shape, CondConv's experts, keeps torch's order)
        kernel = tuple(self.weight.shape) == self.kernel_size + (self.in_channels // self.groups, self.out_channels)
        entries = [StateEntry(prefix + "weight", self.weight, _conv_torch_to_hwio if kernel else None)]
        if self.bias is not None:
            entries.append(StateEntry(prefix + "bias", self.bias))
        return entries

    @property
    def torch_weight(self):
        """`self.weight` as the forward of a torch Conv subclass reads it: torch's (O, I/g, k...) order."""
        return TorchKernel(self.weight)

    def get_config(self):
        return {**super().get_config(), **self._conv_config}


class TorchKernel:
    """A convolution's channels-last kernel (k..., I/g, O) seen in torch's (O, I/g, k...) order: `shape`/`size()`
    are torch's and the functional convolutions use the kernel as it is stored (no Transpose); any other tensor
    op converts it to torch's order."""

    def __init__(self, kernel):
        self.kernel = kernel

    @property
    def shape(self):
        dims = list(self.kernel.shape)
        return tf.TensorShape([dims[-1], dims[-2]] + dims[:-2])

    @property
    def dtype(self):
        return self.kernel.dtype

    def size(self, dim=None):
        return tuple(self.shape) if dim is None else self.shape[dim]

    def __tf_tensor__(self, dtype=None, name=None):
        n = len(self.kernel.shape) - 2
        value = tf.transpose(tf.convert_to_tensor(self.kernel), [n + 1, n] + list(range(n)))
        return value if dtype is None else tf.cast(value, dtype)


class Conv1d(_ConvNd):
    """torch.nn.Conv1d on (N, L, C); kernel stored (k, C_in/groups, C_out)."""

    _conv_rank = 1


class Conv2d(_ConvNd):
    """torch.nn.Conv2d on (N, H, W, C); kernel stored HWIO (kh, kw, C_in/groups, C_out)."""

    _conv_rank = 2


class Conv3d(_ConvNd):
    """torch.nn.Conv3d on (N, D, H, W, C); kernel stored (kd, kh, kw, C_in/groups, C_out)."""

    _conv_rank = 3


class ConvNd(_ConvNd):
    """torch.nn.modules.conv._ConvNd's own constructor, for a class deriving from it with a forward of its own
    (CondConv, dynamic convolutions): torch's full positional signature, the rank the kernel size's length says."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None, **kwargs):
        if transposed:
            raise NotImplementedError("porter: a class deriving from torch's _ConvNd with transposed=True is not "
                                      "supported yet (derive from nn.ConvTranspose2d)")
        self._conv_rank = len(kernel_size) if isinstance(kernel_size, (tuple, list)) else 2
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bool(bias),
                         padding_mode, **kwargs)


class _ConvTransposeNd(TorchLayer):
    """Shared constructor/state of the transposed convolutions (ConvTranspose1d/2d/3d)."""

    porter_layout = "channels_last"
    _conv_rank = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        n = self._conv_rank
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise ValueError("in_channels and out_channels must be divisible by groups (a positive integer)")
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            # torch raises ValueError here too
            raise ValueError(f"{type(self).__name__} does not support string padding")  # noqa: TRY004
        self._conv_config = {"in_channels": in_channels, "out_channels": out_channels, "kernel_size": kernel_size,
                             "stride": stride, "padding": padding, "output_padding": output_padding,
                             "groups": groups, "bias": bias, "dilation": dilation, "padding_mode": padding_mode}
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _conv_tuple(kernel_size, n, "kernel_size")
        self.stride = _conv_tuple(stride, n, "stride")
        self.padding = _conv_tuple(padding, n, "padding")
        self.output_padding = _conv_tuple(output_padding, n, "output_padding")
        self.dilation = _conv_tuple(dilation, n, "dilation")
        self.padding_mode = padding_mode
        for op, s, d in zip(self.output_padding, self.stride, self.dilation):
            if not 0 <= op < max(s, d):
                raise ValueError("output padding must be smaller than either stride or dilation")
        self._conv_native = _conv_transpose_is_native(groups, self.dilation)
        # torch's fan_in for a (in, out/groups, k...) weight is out/groups * prod(k)
        init = uniform_fan_in(out_channels // groups * int(np.prod(self.kernel_size)))
        if self._conv_native:
            shape = self.kernel_size + (out_channels, in_channels)
        else:
            shape = self.kernel_size + (in_channels // groups, out_channels)
        self.weight = self.add_weight(shape=shape, initializer=init, name="weight")
        self.bias = self.add_weight(shape=(out_channels,), initializer=init, name="bias") if bias else None
        self.weight.porter_torch_view = ((in_channels, out_channels // groups) + self.kernel_size,
                                         self._conv_weight_to_keras)
        self.finish_init()

    def call(self, x, output_size=None):
        output_padding = _conv_transpose_output_padding(x, output_size, self.kernel_size, self.stride, self.padding,
                                                        self.output_padding, self.dilation)
        return _conv_transpose(x, self.weight, self.bias, self.stride, self.padding, output_padding, self.dilation,
                               self.groups, self._conv_native)

    def _conv_weight_to_keras(self, weight):
        if self._conv_native:
            return _conv_torch_to_hwio(weight)  # (I, O, k...) -> (k..., O, I)
        return _conv_transpose_torch_to_forward(weight, self.groups)

    def torch_state(self, prefix=""):
        entries = [StateEntry(prefix + "weight", self.weight, self._conv_weight_to_keras)]
        if self.bias is not None:
            entries.append(StateEntry(prefix + "bias", self.bias))
        return entries

    def get_config(self):
        return {**super().get_config(), **self._conv_config}


class ConvTranspose1d(_ConvTransposeNd):
    """torch.nn.ConvTranspose1d on (N, L, C)."""

    _conv_rank = 1


class ConvTranspose2d(_ConvTransposeNd):
    """torch.nn.ConvTranspose2d on (N, H, W, C)."""

    _conv_rank = 2


class ConvTranspose3d(_ConvTransposeNd):
    """torch.nn.ConvTranspose3d on (N, D, H, W, C)."""

    _conv_rank = 3


def _conv_functional(input, weight, bias, stride, padding, dilation, groups, n):
    """F.conv{n}d on channels-last `input` with a torch-layout (O, I/g, k...) weight."""
    x = tf.convert_to_tensor(input)
    stored = weight.kernel if isinstance(weight, TorchKernel) else None  # a Conv layer's own kernel, as stored
    weight = weight if stored is not None else tf.cast(weight, x.dtype)
    if len(weight.shape) != n + 2 or len(x.shape) != n + 2:
        raise ValueError(f"conv{n}d expects a batched {n + 2}-D input and weight")
    if x.shape[-1] is not None and x.shape[-1] != weight.shape[1] * groups:
        raise ValueError(f"conv{n}d: input has {x.shape[-1]} channels, weight expects {weight.shape[1] * groups}")
    kernel = tf.cast(stored, x.dtype) if stored is not None else tf.transpose(weight, list(range(2, n + 2)) + [1, 0])
    stride, dilation = _conv_tuple(stride, n, "stride"), _conv_tuple(dilation, n, "dilation")
    pads = _conv_forward_pads(padding, tuple(weight.shape[2:]), stride, dilation)
    return _conv_forward(x, kernel, bias, stride, pads, dilation, groups)


def _conv_transpose_functional(input, weight, bias, stride, padding, output_padding, groups, dilation, n):
    """F.conv_transpose{n}d on channels-last `input` with a torch-layout (I, O/g, k...) weight."""
    x = tf.convert_to_tensor(input)
    weight = tf.cast(weight, x.dtype)
    if len(weight.shape) != n + 2 or len(x.shape) != n + 2:
        raise ValueError(f"conv_transpose{n}d expects a batched {n + 2}-D input and weight")
    stride, dilation = _conv_tuple(stride, n, "stride"), _conv_tuple(dilation, n, "dilation")
    padding = _conv_tuple(padding, n, "padding")
    output_padding = _conv_tuple(output_padding, n, "output_padding")
    spatial = list(range(2, n + 2))
    native = _conv_transpose_is_native(groups, dilation)
    if native:
        kernel = tf.transpose(weight, spatial + [1, 0])
    else:
        in_channels, out_per_group = weight.shape[0], weight.shape[1]
        kernel_size = list(weight.shape[2:])
        w = tf.reshape(weight, [groups, in_channels // groups, out_per_group] + kernel_size)
        w = tf.transpose(w, [3 + i for i in range(n)] + [1, 0, 2])
        w = tf.reshape(w, kernel_size + [in_channels // groups, groups * out_per_group])
        kernel = tf.reverse(w, list(range(n)))
    return _conv_transpose(x, kernel, bias, stride, padding, output_padding, dilation, groups, native)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv1d on (N, L, C) with a torch (O, I/groups, k) weight."""
    return _conv_functional(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv2d on (N, H, W, C) with a torch (O, I/groups, kh, kw) weight."""
    return _conv_functional(input, weight, bias, stride, padding, dilation, groups, 2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv3d on (N, D, H, W, C) with a torch (O, I/groups, kd, kh, kw) weight."""
    return _conv_functional(input, weight, bias, stride, padding, dilation, groups, 3)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """torch.nn.functional.conv_transpose1d on (N, L, C) with a torch (I, O/groups, k) weight."""
    return _conv_transpose_functional(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """torch.nn.functional.conv_transpose2d on (N, H, W, C) with a torch (I, O/groups, kh, kw) weight."""
    return _conv_transpose_functional(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """torch.nn.functional.conv_transpose3d on (N, D, H, W, C) with a torch (I, O/groups, kd, kh, kw) weight."""
    return _conv_transpose_functional(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)
