"""torch.nn.functional.affine_grid and grid_sample (spatial transformer networks) on TensorFlow tensors.

`affine_grid` works in torch's order: theta (N, 2, 3) or (N, 3, 4), the grid (N, H, W, 2) or (N, D, H, W, 3) of
(x, y[, z]) coordinates in [-1, 1] (a grid has no channel axis). `grid_sample` takes the image channels-last,
(N, H, W, C) or (N, D, H, W, C), and the grid in torch's order, and returns the samples channels-last,
(N, H_out, W_out, C). Each sample is one `tf.gather` (`batch_dims=1`) of every tap it reads (1 nearest, 4 bilinear,
8 trilinear, 16 bicubic pixels, each with all its channels) at indices clamped into the image, read as zero where
torch reads outside it: static shapes, no host callbacks, so XLA and TPUs compile it. Coordinates are float32 also
under 16-bit compute.
"""

import numpy as np
import tensorflow as tf

_GRID_SAMPLE_CUBIC_A = -0.75  # torch's bicubic convolution constant (as in interpolate's bicubic)


def _grid_linspace(steps, align_corners):
    """torch's `linspace_from_neg_one`: the normalised centres (align_corners False) or corners (True) of `steps`
    pixels along one axis, as float32 numpy."""
    if steps <= 1:
        return np.zeros([1], np.float32)
    values = np.linspace(-1.0, 1.0, int(steps), dtype=np.float32)
    if not align_corners:
        values = values * np.float32(steps - 1) / np.float32(steps)
    return values.astype(np.float32)


def affine_grid(theta, size, align_corners=None):
    """torch.nn.functional.affine_grid: for each output position, theta @ (x, y[, z], 1) with (x, y[, z]) the
    position's normalised coordinates; `size` is torch's (N, C, H, W) or (N, C, D, H, W) (spatial sizes static)."""
    size = list(size)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {tuple(size)}.")
    spatial = [int(s) for s in size[2:]]
    dims = len(spatial)
    theta = tf.convert_to_tensor(theta)
    if not theta.dtype.is_floating:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype.name}")
    if theta.dtype.size < 4:  # 16-bit compute (mixed precision): the coordinates stay float32, as the sampler uses
        theta = tf.cast(theta, tf.float32)
    if theta.shape.rank != 3 or theta.shape[1] != dims or theta.shape[2] != dims + 1:
        raise ValueError(f"Expected a batch of {dims}D affine matrices of shape Nx{dims}x{dims + 1} for size "
                         f"{tuple(size)}. Got {tuple(theta.shape)}.")
    if min(spatial) <= 0:
        raise ValueError(f"affine_grid: expected non-zero, positive output size. Got {tuple(size)}")
    axes = np.meshgrid(*[_grid_linspace(s, bool(align_corners)) for s in spatial], indexing="ij")
    # torch's base grid holds (x, y[, z], 1): the last spatial axis first
    base = np.stack(list(reversed(axes)) + [np.ones(spatial, np.float32)], axis=-1).reshape(-1, dims + 1)
    base = tf.constant(base, theta.dtype)  # (P, dims + 1)
    # theta @ (x, y, 1) as a sum of products, not a matmul: exact fp32 on TPUs too, where matmuls run in bf16 passes
    points = tf.reduce_sum(base[None, :, None, :] * theta[:, None, :, :], axis=-1)  # (N, P, dims)
    return tf.reshape(points, [-1] + spatial + [dims])


def _grid_reflect(coordinate, twice_low, twice_high):
    """torch's reflect_coordinates: `coordinate` folded back into [twice_low / 2, twice_high / 2]."""
    if twice_low == twice_high:
        return tf.zeros_like(coordinate)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    distance = tf.abs(coordinate - low)
    extra = tf.math.floormod(distance, span)
    flips = tf.floor(distance / span)
    even = tf.equal(tf.math.floormod(flips, 2.0), 0.0)
    return tf.where(even, extra + low, span - extra + low)


def _grid_apply_padding(coordinate, size, padding_mode, align_corners):
    """torch's compute_coordinates: a pixel coordinate clipped (border) or reflected then clipped (reflection)."""
    if padding_mode == "border":
        return tf.clip_by_value(coordinate, 0.0, float(size - 1))
    if padding_mode == "reflection":
        if align_corners:
            coordinate = _grid_reflect(coordinate, 0, 2 * (size - 1))
        else:
            coordinate = _grid_reflect(coordinate, -1, 2 * size - 1)
        return tf.clip_by_value(coordinate, 0.0, float(size - 1))
    return coordinate


def _grid_unnormalize(coordinate, size, align_corners):
    """torch's grid_sampler_unnormalize: [-1, 1] -> pixel coordinates (corner pixels' centres or outer edges)."""
    if align_corners:
        return (coordinate + 1) / 2 * (size - 1)
    return ((coordinate + 1) * size - 1) / 2


def _grid_across_axes(per_axis, combine):
    """Per-axis tap tensors (N, P, k) combined over every tap of every axis: (N, P, k, ..., k), one k per axis
    (axis a's taps along dim 2 + a), by `combine` (add for flat indices, multiply for weights, and for masks)."""
    dims = len(per_axis)
    total = None
    for axis, values in enumerate(per_axis):
        for _ in range(axis):
            values = values[..., None, :]
        for _ in range(dims - 1 - axis):
            values = values[..., None]
        total = values if total is None else combine(total, values)
    return total


def _grid_gather_taps(flat, positions, weights, spatial):
    """The weighted sum over taps of the pixels at integer `positions` (per axis (N, P, k), float), read as zero
    outside the image: one gather of every tap, (N, P, C)."""
    strides = [int(np.prod(spatial[axis + 1:], dtype=np.int64)) for axis in range(len(spatial))]
    inside = [tf.logical_and(p >= 0.0, p <= float(s - 1)) for p, s in zip(positions, spatial)]
    index = [tf.cast(tf.clip_by_value(p, 0.0, float(s - 1)), tf.int32) * stride
             for p, s, stride in zip(positions, spatial, strides)]
    index = _grid_across_axes(index, tf.add)
    inside = _grid_across_axes(inside, tf.logical_and)
    weight = _grid_across_axes(weights, tf.multiply)
    values = tf.gather(flat, index, batch_dims=1)  # (N, P, k, ..., k, C)
    terms = tf.where(inside[..., None], values * weight[..., None], tf.zeros_like(values))
    return tf.reduce_sum(terms, axis=list(range(2, 2 + len(spatial))))


def _grid_cubic_coefficients(t):
    """torch's get_cubic_upsample_coefficients for fraction `t`: the weights of taps -1, 0, 1, 2."""
    a = _GRID_SAMPLE_CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1.0), near(t), near(1.0 - t), far(1.0 - t + 1.0)]


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """torch.nn.functional.grid_sample on a channels-last image (N, *spatial, C) and a torch-order grid
    (N, *out_spatial, dims) of (x, y[, z]) in [-1, 1]: the samples, channels-last (N, *out_spatial, C)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    input = tf.convert_to_tensor(input)
    if input.dtype.size < 4:  # 16-bit compute (mixed precision): pixel coordinates need float32's mantissa
        return tf.cast(grid_sample(tf.cast(input, tf.float32), grid, mode, padding_mode, align_corners), input.dtype)
    grid = tf.cast(tf.convert_to_tensor(grid), input.dtype)
    dims = len(input.shape) - 2
    if dims not in (2, 3) or grid.shape.rank != dims + 2 or grid.shape[-1] != dims:
        raise ValueError(f"grid_sample: expected a 4D or 5D input and a grid of the same rank ending in the number "
                         f"of spatial dims, got input {tuple(input.shape)} (channels-last) and grid "
                         f"{tuple(grid.shape)}")
    if mode == "bicubic" and dims != 2:
        raise ValueError("grid_sampler(): bicubic interpolation only supports 4D input")
    spatial = [int(s) for s in input.shape[1:-1]]  # sizes the coordinates scale by: static, as XLA needs them
    channels = input.shape[-1] if input.shape[-1] is not None else tf.shape(input)[-1]
    batch = tf.shape(grid)[0]
    flat = tf.reshape(input, [tf.shape(input)[0], -1, channels])
    points = tf.reshape(grid, [batch, -1, dims])
    # torch's axis order (D, H, W): coordinate k of the grid addresses spatial axis dims - 1 - k
    pixel = [_grid_unnormalize(points[..., dims - 1 - axis], spatial[axis], align_corners) for axis in range(dims)]
    if mode == "bicubic":
        positions, weights = _grid_bicubic_taps(pixel, spatial, padding_mode, align_corners)
    else:
        pixel = [_grid_apply_padding(p, s, padding_mode, align_corners) for p, s in zip(pixel, spatial)]
        positions, weights = _grid_nearest_taps(pixel) if mode == "nearest" else _grid_linear_taps(pixel)
    samples = _grid_gather_taps(flat, positions, weights, spatial)
    out_dims = [d if d is not None else tf.shape(grid)[axis] for axis, d in enumerate(grid.shape[:-1])]
    return tf.reshape(samples, out_dims + [channels])


def _grid_nearest_taps(pixel):
    """Nearest: per axis one tap, the coordinate rounded half to even (torch's nearbyint), of weight 1."""
    return [tf.round(p)[..., None] for p in pixel], [tf.ones_like(p)[..., None] for p in pixel]


def _grid_linear_taps(pixel):
    """Bi/trilinear: per axis the two neighbours and their weights, the opposite fractions (as torch computes them:
    `(below + 1) - x` and `x - below`)."""
    below = [tf.floor(p) for p in pixel]
    positions = [tf.stack([b, b + 1], axis=-1) for b in below]
    weights = [tf.stack([(b + 1) - p, p - b], axis=-1) for p, b in zip(pixel, below)]
    return positions, weights


def _grid_bicubic_taps(pixel, spatial, padding_mode, align_corners):
    """Bicubic (2-D): per axis four taps around the point, each padded as torch's get_value_bounded pads it, and
    their cubic convolution weights."""
    below = [tf.floor(p) for p in pixel]
    positions = [tf.stack([tf.floor(_grid_apply_padding(b + (k - 1), s, padding_mode, align_corners))
                           for k in range(4)], axis=-1) for b, s in zip(below, spatial)]
    weights = [tf.stack(_grid_cubic_coefficients(p - b), axis=-1) for p, b in zip(pixel, below)]
    return positions, weights
