"""torch's advanced indexing with several index tensors (`x[batch_indices, patch_indices]`), as one tf.gather_nd:
integer tensors and lists broadcast together; ints select first (torch indexes with them as basic indexing does);
slices keep their axes; the broadcast index dims stand where
the indices stood when they are adjacent, first otherwise (numpy's and torch's rule). Sizes stay static."""

import numpy as np
import tensorflow as tf


def _is_advanced(item):
    return tf.is_tensor(item) or isinstance(item, (list, tuple, np.ndarray))


def advanced_index(x, index):
    """x[index] for a tuple `index` holding integer tensors (and ints, lists, slices, Ellipsis)."""
    x = tf.convert_to_tensor(x)
    index = index if isinstance(index, tuple) else (index,)
    rank = len(x.shape)
    if any(item is None for item in index):
        raise NotImplementedError("advanced indexing with None (a new axis) is not supported")
    if any(item is Ellipsis for item in index):
        at = index.index(Ellipsis)
        index = index[:at] + (slice(None),) * (rank - len(index) + 1) + index[at + 1:]
    index = tuple(index) + (slice(None),) * (rank - len(index))
    # ints and bounded slices first, as torch applies them (an int drops its axis, as basic indexing does)
    if any(isinstance(item, int) or isinstance(item, slice) and item != slice(None) for item in index):
        x = x[tuple(item if isinstance(item, (int, slice)) else slice(None) for item in index)]
        index = tuple(item if _is_advanced(item) else slice(None) for item in index if not isinstance(item, int))
        rank = len(x.shape)
    shape = tf.shape(x)
    advanced = [axis for axis, item in enumerate(index) if _is_advanced(item)]
    rest = [axis for axis in range(rank) if axis not in advanced]
    indices = []
    for axis in advanced:
        item = tf.convert_to_tensor(index[axis])
        if item.dtype == tf.bool:
            raise NotImplementedError("boolean mask indexing has a data-dependent size (not XLA-compilable)")
        item = tf.cast(item, tf.int64)
        size = tf.cast(shape[axis], tf.int64)
        indices.append(tf.where(item < 0, item + size, item))  # torch counts negative indices from the end
    if len(advanced) == 1:  # (LeViT's `attention_biases[:, idxs]`): one gather along that axis, no transpose
        return tf.gather(x, indices[0], axis=advanced[0])
    broadcast = indices[0].shape
    for item in indices[1:]:
        broadcast = tf.broadcast_static_shape(broadcast, item.shape)
    indices = [tf.broadcast_to(item, broadcast) for item in indices]
    adjacent = advanced == list(range(advanced[0], advanced[0] + len(advanced)))
    if adjacent and advanced[0] > 0:
        # full slices first (DLRM's `Z[:, li, lj]`): a gather with the leading axes as its batch, where torch
        # puts the index dims (moving them to the front and back cost two transposes)
        front = advanced[0]
        lead = shape[:front]
        batch = tf.reduce_prod(lead)
        flat = tf.reshape(x, tf.concat([[batch], shape[front:]], 0))
        full = tf.concat([[batch], tf.shape(indices[0])], 0)
        rows = tf.reshape(tf.range(tf.cast(batch, tf.int64)), [-1] + [1] * len(broadcast))
        coordinates = [tf.broadcast_to(rows, full)] + [tf.broadcast_to(item[None], full) for item in indices]
        gathered = tf.gather_nd(flat, tf.stack(coordinates, axis=-1))  # (full coordinates: no batch_dims, whose
        # gather transposes its indices)
        return tf.reshape(gathered, tf.concat([lead, tf.shape(gathered)[1:]], 0))
    moved = x if advanced == list(range(len(advanced))) else tf.transpose(x, advanced + rest)
    return tf.gather_nd(moved, tf.stack(indices, axis=-1))
