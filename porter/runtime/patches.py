"""torch.nn.functional.unfold / fold (im2col / col2im) and nn.Unfold / nn.Fold on TensorFlow tensors.

torch's unfold turns (N, C, H, W) into (N, C*kh*kw, L): row c*kh*kw + i*kw + j holds channel c at kernel offset
(i, j), column l the l-th sliding position in row-major order. Here every kernel offset is one strided slice of
the zero-padded input and the slices are stacked after the channels, which gives that row order with no
arithmetic on the values (exact, any dtype, XLA-friendly). Both layouts are served without a transpose:
- torch's layout: (N, C, H, W) -> (N, C*kh*kw, L), and fold back;
- channels-last: (N, H, W, C) -> (N, L, C*kh*kw), i.e. torch's result with its dim 1 moved last, and fold from
  that to (N, H, W, C).
fold is the adjoint of unfold: each kernel offset's values are scattered back into their strided positions (the
gradient of the strided slice unfold took) and the offsets are summed, overlaps included, as torch does.
"""

import tensorflow as tf

from porter.runtime.base import TorchLayer, to_channels_first, to_channels_last
from porter.runtime.pool import _pool_shape, _pool_tuple


def _patch_options(kernel_size, dilation, padding, stride):
    options = [_pool_tuple(v, 2, name) for v, name in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                                       (padding, "padding"), (stride, "stride"))]
    kernel, dilation, padding, stride = options
    if min(kernel) < 1 or min(dilation) < 1 or min(stride) < 1 or min(padding) < 0:
        raise ValueError(f"unfold/fold: kernel_size {kernel}, dilation {dilation} and stride {stride} must be "
                         f"positive and padding {padding} non-negative")
    return kernel, dilation, padding, stride


def _patch_counts(sizes, kernel, dilation, padding, stride):
    """Sliding positions along each spatial axis (static ints where the sizes are)."""
    return [(size + 2 * p - d * (k - 1) - 1) // s + 1 for size, k, d, p, s in zip(
        sizes, kernel, dilation, padding, stride)]


def unfold(input, kernel_size, dilation=1, padding=0, stride=1, channels_last=False):
    """torch.nn.functional.unfold; `channels_last`: (N, H, W, C) in, (N, L, C*kh*kw) out."""
    x = tf.convert_to_tensor(input)
    rank = len(x.shape)
    if channels_last and rank != 4:
        raise ValueError(f"unfold: a channels-last input must be 4-D, got {rank}-D")
    if rank == 3:  # torch's unbatched (C, H, W)
        return unfold(x[None], kernel_size, dilation, padding, stride)[0]
    if rank != 4:
        raise ValueError(f"unfold: expected a 3-D (unbatched) or 4-D (batched) input, got {rank}-D")
    kernel, dilation, padding, stride = _patch_options(kernel_size, dilation, padding, stride)
    spatial = (1, 2) if channels_last else (2, 3)
    paddings = [[0, 0]] * 4
    for axis, p in zip(spatial, padding):
        paddings[axis] = [p, p]
    x = tf.pad(x, paddings) if any(padding) else x
    sizes = _pool_shape(x)
    counts = _patch_counts([sizes[a] - 2 * p for a, p in zip(spatial, padding)], kernel, dilation, padding, stride)
    if all(isinstance(c, int) for c in counts) and min(counts) < 1:
        raise ValueError(f"unfold: input of spatial size {[sizes[a] for a in spatial]} (padded) is too small for "
                         f"kernel_size {kernel} with dilation {dilation}")
    slices = []
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            index = [slice(None)] * 4
            for axis, offset, count, s in zip(spatial, (i * dilation[0], j * dilation[1]), counts, stride):
                index[axis] = slice(offset, offset + s * (count - 1) + 1, s)
            slices.append(x[tuple(index)])
    positions = counts[0] * counts[1]
    if channels_last:  # (N, oh, ow, C, K) -> (N, L, C*K)
        return tf.reshape(tf.stack(slices, axis=-1), [sizes[0], positions, sizes[3] * len(slices)])
    # (N, C, K, oh, ow) -> (N, C*K, L)
    return tf.reshape(tf.stack(slices, axis=2), [sizes[0], sizes[1] * len(slices), positions])


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1, channels_last=False):
    """torch.nn.functional.fold; `channels_last`: (N, L, C*kh*kw) in, (N, H, W, C) out."""
    x = tf.convert_to_tensor(input)
    rank = len(x.shape)
    if channels_last and rank != 3:
        raise ValueError(f"fold: a channels-last input must be 3-D, got {rank}-D")
    if rank == 2:  # torch's unbatched (C*kh*kw, L)
        return fold(x[None], output_size, kernel_size, dilation, padding, stride)[0]
    if rank != 3:
        raise ValueError(f"fold: expected a 2-D (unbatched) or 3-D (batched) input, got {rank}-D")
    kernel, dilation, padding, stride = _patch_options(kernel_size, dilation, padding, stride)
    height, width = _pool_tuple(output_size, 2, "output_size")
    counts = _patch_counts((height, width), kernel, dilation, padding, stride)
    sizes = _pool_shape(x)
    columns, positions = (sizes[2], sizes[1]) if channels_last else (sizes[1], sizes[2])
    patches = kernel[0] * kernel[1]
    if isinstance(columns, int) and columns % patches:
        raise ValueError(f"fold: expected size of input's dimension 1 to be divisible by the product of "
                         f"kernel_size, but got input.size(1)={columns} and kernel_size={kernel}")
    if isinstance(positions, int) and positions != counts[0] * counts[1]:
        raise ValueError(f"fold: given output_size={(height, width)}, kernel_size={kernel}, dilation={dilation}, "
                         f"padding={padding}, stride={stride}, expected size of input's dimension 2 to match the "
                         f"calculated number of sliding blocks {counts[0]} * {counts[1]} = {counts[0] * counts[1]}, "
                         f"but got input.size(2)={positions}")
    channels = columns // patches
    padded = (height + 2 * padding[0], width + 2 * padding[1])
    if channels_last:
        x = tf.reshape(x, [sizes[0], counts[0], counts[1], channels, patches])
        shape = tf.stack([tf.shape(x)[0], padded[0], padded[1], tf.shape(x)[3]])
        spatial, mask = (1, 2), 0b1001  # batch and channel axes taken whole
    else:
        x = tf.reshape(x, [sizes[0], channels, patches, counts[0], counts[1]])
        shape = tf.stack([tf.shape(x)[0], tf.shape(x)[1], padded[0], padded[1]])
        spatial, mask = (2, 3), 0b0011
    out = None
    for k in range(patches):
        i, j = divmod(k, kernel[1])
        values = x[..., k] if channels_last else x[:, :, k]
        begin, end, strides = [0, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]
        for axis, offset, count, s in zip(spatial, (i * dilation[0], j * dilation[1]), counts, stride):
            begin[axis], end[axis], strides[axis] = offset, offset + s * (count - 1) + 1, s
        placed = tf.raw_ops.StridedSliceGrad(shape=shape, begin=tf.constant(begin), end=tf.constant(end),
                                             strides=tf.constant(strides), dy=values, begin_mask=mask,
                                             end_mask=mask)
        out = placed if out is None else out + placed
    index = [slice(None)] * 4
    for axis, p, size in zip(spatial, padding, (height, width)):
        index[axis] = slice(p, p + size)
    return out[tuple(index)] if any(padding) else out


class Unfold(TorchLayer):
    """torch.nn.Unfold on a channels-last (N, H, W, C) input: (N, L, C*kh*kw), torch's result with dim 1 last.

    An unbatched (C, H, W) input arrives as (C, W, H) under the channels-last contract; its result is 2-D,
    the same in both layouts.
    """

    porter_layout = "channels_last"

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1, **kwargs):
        super().__init__(**kwargs)
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride
        self.finish_init()

    def call(self, x):
        options = (self.kernel_size, self.dilation, self.padding, self.stride)
        if len(x.shape) == 3:
            return unfold(to_channels_first(x), *options)
        return unfold(x, *options, channels_last=True)

    def get_config(self):
        return {**super().get_config(), "kernel_size": self.kernel_size, "dilation": self.dilation,
                "padding": self.padding, "stride": self.stride}


class Fold(TorchLayer):
    """torch.nn.Fold on a channels-last (N, L, C*kh*kw) input (torch's (N, C*kh*kw, L) with dim 1 last) ->
    (N, H, W, C). An unbatched 2-D input gives torch's (C, H, W) moved to the channels-last contract."""

    porter_layout = "channels_last"

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1, **kwargs):
        super().__init__(**kwargs)
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride
        self.finish_init()

    def call(self, x):
        options = (self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)
        if len(x.shape) == 2:
            return to_channels_last(fold(x, *options))
        return fold(x, *options, channels_last=True)

    def get_config(self):
        return {**super().get_config(), "output_size": self.output_size, "kernel_size": self.kernel_size,
                "dilation": self.dilation, "padding": self.padding, "stride": self.stride}


def unfold_windows(input, dimension, size, step, windows_last=True):
    """Tensor.unfold: dim `dimension` replaced by its windows of `size` taken every `step` (torch's count,
    `(length - size) // step + 1`), each window's values along a new last dim. One gather of the window
    indices (exact, any dtype, XLA-friendly). `windows_last=False`: the window axis stays right after the count
    axis (a tensor held in another order: its new torch dim is stored there)."""
    input = tf.convert_to_tensor(input)
    rank = len(input.shape)
    dimension = dimension + rank if dimension < 0 else dimension
    if size < 1 or step < 1:
        raise ValueError(f"unfold: size {size} and step {step} must be positive")
    length = input.shape[dimension] if input.shape[dimension] is not None else tf.shape(input)[dimension]
    count = (length - size) // step + 1
    starts = tf.range(count) * step
    windows = tf.gather(input, starts[:, None] + tf.range(size)[None, :], axis=dimension)
    # (..., count, size, ...rest): the window dim moves last
    order = list(range(dimension + 1)) + list(range(dimension + 2, rank + 1)) + [dimension + 1]
    return windows if dimension == rank - 1 or not windows_last else tf.transpose(windows, order)
