"""torch's strides of a contiguous tensor (`Tensor.stride`) and `Tensor.as_strided` read through them: a
TensorFlow tensor has no strides, so the port treats every tensor as torch's contiguous one of its shape (what
`as_strided` is called on in practice: HDemucs frames a padded signal with it), and gathers the elements the sizes
and strides address from the flattened tensor."""

import numpy as np
import tensorflow as tf


def tensor_stride(input, dim=None):
    """torch's `x.stride()` / `x.stride(dim)` of the contiguous tensor of `input`'s shape (element counts)."""
    shape = [int(s) for s in input.shape]
    strides = [int(np.prod(shape[d + 1:])) for d in range(len(shape))]
    return tuple(strides) if dim is None else strides[dim]


def as_strided(input, size, stride, storage_offset=0):
    """torch's `x.as_strided(size, stride, storage_offset)` of a contiguous `x`: element i of the result is element
    `storage_offset + sum(i_d * stride_d)` of the flattened tensor. Sizes and strides must be known when traced."""
    size, stride = [int(s) for s in size], [int(s) for s in stride]
    offsets = np.full(size, int(storage_offset), dtype=np.int64)
    for d, (count, step) in enumerate(zip(size, stride, strict=True)):
        shape = [1] * len(size)
        shape[d] = count
        offsets = offsets + (np.arange(count, dtype=np.int64) * step).reshape(shape)
    return tf.gather(tf.reshape(input, [-1]), tf.constant(offsets))
