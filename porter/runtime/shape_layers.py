"""torch.nn.Flatten / Unflatten (layout "source": torch's axis order) and Softmax2d (channels-last).

Reshapes keep every statically known size and read the others (the batch) from tf.shape at run time, so they
compile under XLA with an unknown batch size and keep static shapes for the layers that follow.
"""

import numpy as np
import tensorflow as tf

from porter.runtime.activation import _softmax_in_float32
from porter.runtime.base import TorchLayer, static_dims


def _shape_axis(dim, rank, what):
    if not -rank <= dim < rank:
        raise IndexError(f"{what}: dimension {dim} out of range for a {rank}-D input")
    return dim % rank


def _shape_flatten(x, start_dim=0, end_dim=-1):
    """torch.flatten semantics: merge axes start_dim..end_dim (a 0-d input becomes 1-d)."""
    rank = len(x.shape)
    if rank == 0:
        return tf.reshape(x, [1])
    start, end = _shape_axis(start_dim, rank, "flatten"), _shape_axis(end_dim, rank, "flatten")
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} cannot come after end_dim {end_dim}")
    if start == end:
        return x
    sizes = static_dims(x)
    merged = sizes[start:end + 1]
    if all(isinstance(size, int) for size in merged):
        merged = int(np.prod(merged))
    else:
        merged = tf.reduce_prod(tf.stack([tf.cast(size, tf.int32) for size in merged]))
    return tf.reshape(x, sizes[:start] + [merged] + sizes[end + 1:])


def _shape_unflatten(x, dim, sizes):
    """torch.unflatten semantics: split axis `dim` into `sizes` (one entry may be -1)."""
    rank = len(x.shape)
    axis = _shape_axis(dim, rank, "unflatten")
    sizes = [int(size) for size in sizes]
    if sizes.count(-1) > 1:
        raise ValueError("unflatten: only one dimension can be inferred (-1)")
    current = x.shape[axis]
    known = int(np.prod([size for size in sizes if size != -1]))
    if -1 in sizes and current is not None:
        if known == 0 or current % known:
            raise ValueError(f"unflatten: provided sizes {sizes} don't multiply up to the size of dim {dim} "
                             f"({current}) in the input tensor")
        sizes = [current // known if size == -1 else size for size in sizes]
    elif -1 not in sizes and current is not None and known != current:
        raise ValueError(f"unflatten: provided sizes {sizes} don't multiply up to the size of dim {dim} "
                         f"({current}) in the input tensor")
    full = static_dims(x)
    return tf.reshape(x, full[:axis] + sizes + full[axis + 1:])


class Flatten(TorchLayer):
    """torch.nn.Flatten(start_dim=1, end_dim=-1) on torch's axis order; held (`hold()`), on an image held
    channels-last as it lies, (H, W, C), for a Linear whose weight columns were permuted at load time."""

    porter_layout = "source"

    def __init__(self, start_dim=1, end_dim=-1, **kwargs):
        super().__init__(**kwargs)
        self.start_dim, self.end_dim = start_dim, end_dim
        self.finish_init()

    def hold(self):
        """Take the image channels-last (the Sequential holding it converts nothing) and flatten it as it lies."""
        self.porter_layout, self.layout_out = "channels_last", "source"

    def call(self, x):
        return _shape_flatten(x, self.start_dim, self.end_dim)

    def get_config(self):
        return {**super().get_config(), "start_dim": self.start_dim, "end_dim": self.end_dim}


class Unflatten(TorchLayer):
    """torch.nn.Unflatten(dim, unflattened_size) on torch's axis order."""

    porter_layout = "source"

    def __init__(self, dim, unflattened_size, **kwargs):
        super().__init__(**kwargs)
        if isinstance(dim, str):
            raise NotImplementedError("Unflatten: named-tensor dims are not supported")
        if unflattened_size and isinstance(unflattened_size[0], (tuple, list)):
            raise NotImplementedError("Unflatten: named-tensor sizes are not supported")
        self.dim, self.unflattened_size = dim, tuple(int(size) for size in unflattened_size)
        self.held = False
        self.finish_init()

    def hold(self):
        """Split a Linear's output whose weight rows were permuted at load time ((H, W, C) order) into the image
        held channels-last."""
        self.held, self.layout_out = True, "channels_last"

    def call(self, x):
        if self.held:
            return _shape_unflatten(x, self.dim, self.unflattened_size[1:] + self.unflattened_size[:1])
        return _shape_unflatten(x, self.dim, self.unflattened_size)

    def get_config(self):
        return {**super().get_config(), "dim": self.dim, "unflattened_size": list(self.unflattened_size)}


class Softmax2d(TorchLayer):
    """torch.nn.Softmax2d: softmax over the channels of (N, C, H, W) -> channels-last (N, H, W, C), last axis.

    An unbatched (C, H, W) input arrives as (C, W, H) under the channels-last contract: torch's dim -3 is axis 0.
    """

    porter_layout = "channels_last"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.finish_init()

    def call(self, x):
        rank = len(x.shape)
        if rank not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {rank}D instead")
        return _softmax_in_float32(tf.nn.softmax, x, -1 if rank == 4 else 0)
