"""torch's view/reshape on a tensor the port holds in another axis order (channels-last, or a permutation not yet
performed), without moving the data into torch's order first.

A view only splits and merges runs of adjacent torch dims. When every run is stored contiguously, the view is a
reshape of the stored tensor; a run stored out of torch's order (the view/transpose/view of a channel shuffle)
costs a gather with an index fixed when the function is traced, never a transpose of the whole tensor.
"""

import numpy as np
import tensorflow as tf


def view_in_layout(input, order, out_order, *shape):
    """torch's `input.view(*shape)`, where `input`'s axes hold torch dims `order` and the result's axes are to hold
    the new torch dims `out_order`. Exact for every view torch accepts: when the sizes do not group as the port
    expected, it falls back to transpose, reshape, transpose."""
    sizes = list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else list(shape)
    sizes = [s if isinstance(s, int) or not hasattr(s, "dtype") else tf.cast(s, tf.int32) for s in sizes]
    plan = _regroup_plan([input.shape[order.index(d)] for d in range(len(order))], order, out_order, sizes)
    if plan is None:
        identity = list(range(len(order)))
        torch_order = input if order == identity else tf.transpose(input, [order.index(d) for d in identity])
        result = tf.reshape(torch_order, sizes)
        return result if out_order == list(range(len(sizes))) else tf.transpose(result, out_order)
    stored_shape, gathers, out_shape = plan
    stored = tf.reshape(input, stored_shape)
    for axis, index in gathers:
        stored = tf.gather(stored, index, axis=axis)
    return tf.reshape(stored, out_shape)


def _regroup_plan(torch_shape, order, out_order, sizes):
    """(shape with one axis per run in stored order, [(axis, gather index)], result shape) or None."""
    if any(s is None for s in torch_shape[1:]) or not sizes:
        return None
    new_shape = _resolved(torch_shape, sizes)
    if new_shape is None:
        return None
    runs = _runs(torch_shape[1:], new_shape[1:])
    if runs is None:
        return None
    runs = [([0], [0])] + [([d + 1 for d in old], [d + 1 for d in new]) for old, new in runs]
    stored_runs = _stored_sequence(order, [old for old, _ in runs])
    result_runs = _stored_sequence(out_order, [new for _, new in runs])
    if stored_runs is None or stored_runs != result_runs:
        return None
    batch = torch_shape[0] if torch_shape[0] is not None else -1
    stored_shape, gathers, out_shape = [], [], []
    for axis, run in enumerate(stored_runs):
        old, new = runs[run]
        stored_shape.append(batch if run == 0 else int(np.prod([torch_shape[d] for d in old])))
        if run == 0:
            continue
        index = _gather_index([d for d in order if d in old], [torch_shape[d] for d in old],
                              [d for d in out_order if d in new], [new_shape[d] for d in new])
        if index is not None:
            gathers.append((axis, index))
    for d in out_order:
        out_shape.append(batch if d == 0 else new_shape[d])
    return stored_shape, gathers, out_shape


def _resolved(torch_shape, sizes):
    """The view's sizes as ints (one -1 worked out; the batch stays a symbol), or None when not static."""
    if len(sizes) < 1 or not (sizes[0] == -1 or not isinstance(sizes[0], int) or sizes[0] == torch_shape[0]):
        return None
    rest = sizes[1:]
    if not all(isinstance(s, int) for s in rest) or sum(s == -1 for s in rest) > 1 or sizes[0] == -1 and -1 in rest:
        return None
    known = int(np.prod([s for s in rest if s != -1]))
    total = int(np.prod(torch_shape[1:]))
    if -1 in rest:
        if known == 0 or total % known:
            return None
        rest = [total // known if s == -1 else s for s in rest]
    if int(np.prod(rest)) != total:
        return None  # then the batch is not dim 0 of the result: let torch's order decide
    return [torch_shape[0]] + rest


def _runs(old_sizes, new_sizes):
    """Pair runs of adjacent old dims with runs of adjacent new dims of equal size (indices from 0)."""
    runs, i, j = [], 0, 0
    while i < len(old_sizes) or j < len(new_sizes):
        old, new = [i], [j]
        if i >= len(old_sizes) or j >= len(new_sizes):
            return None
        left, right = old_sizes[i], new_sizes[j]
        i, j = i + 1, j + 1
        while left != right:
            if left < right:
                if i >= len(old_sizes):
                    return None
                left *= old_sizes[i]
                old.append(i)
                i += 1
            else:
                if j >= len(new_sizes):
                    return None
                right *= new_sizes[j]
                new.append(j)
                j += 1
        runs.append((old, new))
    return runs


def _stored_sequence(order, runs):
    """The runs in the order `order` stores them, or None when a run's dims are not stored next to each other."""
    sequence = []
    for d in order:
        run = next(r for r, dims in enumerate(runs) if d in dims)
        if not sequence or sequence[-1] != run:
            if run in sequence:
                return None
            sequence.append(run)
    return sequence


def _gather_index(stored, stored_sizes_by_dim, wanted, wanted_sizes_by_dim):
    """Within one run: for each position of the result's storage, the position in the input's storage; None when
    the two storages agree (a plain reshape)."""
    old_dims = sorted(stored)
    size_of = dict(zip(old_dims, stored_sizes_by_dim))
    count = int(np.prod(stored_sizes_by_dim))
    # position in storage for each element, indexed in torch's order (row-major over the old dims)
    storage = np.arange(count).reshape([size_of[d] for d in stored])
    by_torch = storage.transpose([stored.index(d) for d in old_dims]).reshape(-1)
    new_dims = sorted(wanted)
    new_size_of = dict(zip(new_dims, wanted_sizes_by_dim))
    result = by_torch.reshape([new_size_of[d] for d in new_dims]).transpose(
        [new_dims.index(d) for d in wanted]).reshape(-1)
    if np.array_equal(result, np.arange(count)):
        return None
    return tf.constant(result.astype(np.int32))
