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
    torch_shape = [input.shape[order.index(d)] for d in range(len(order))]
    plan = _regroup_plan(torch_shape, order, out_order, sizes)
    moved = _moved_runs_plan(torch_shape, order, out_order, sizes) if plan is None else None
    if moved is not None:  # the runs of merged dims only come in another order: one transpose, then the reshape
        perm, out_shape = moved
        return tf.reshape(input if perm == sorted(perm) else tf.transpose(input, perm), out_shape)
    split = _split_runs_plan(torch_shape, order, out_order, sizes) if plan is None else None
    if split is not None:  # each stored dim split where it lies, then one transpose
        split_shape, perm = split
        stored = tf.reshape(input, split_shape)
        return stored if perm == sorted(perm) else tf.transpose(stored, perm)
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
    new_shape = _resolved(torch_shape, sizes)
    if new_shape is None:
        return None
    runs = _runs(torch_shape, new_shape)
    if runs is None:
        return None
    stored_runs = _stored_sequence(order, [old for old, _ in runs])
    result_runs = _stored_sequence(out_order, [new for _, new in runs])
    if stored_runs is None or stored_runs != result_runs:
        return None
    stored_shape, gathers = [], []
    for axis, run in enumerate(stored_runs):
        old, new = runs[run]
        old_sizes, new_sizes = [torch_shape[d] for d in old], [new_shape[d] for d in new]
        if None in old_sizes or None in new_sizes:  # the run holding the unknown sizes (the batch): kept in order
            if [d for d in order if d in old] != old or [d for d in out_order if d in new] != new:
                return None
            stored_shape.append(-1)
            continue
        stored_shape.append(int(np.prod(old_sizes)))
        index = _gather_index([d for d in order if d in old], old_sizes, [d for d in out_order if d in new],
                              new_sizes)
        if index is not None:
            gathers.append((axis, index))
    out_shape = [new_shape[d] if new_shape[d] is not None else sizes[d] for d in out_order]
    if any(not isinstance(s, int) for s in out_shape):
        out_shape = tf.stack([tf.cast(s, tf.int32) for s in out_shape])
    return stored_shape, gathers, out_shape


def _moved_runs_plan(torch_shape, order, out_order, sizes):
    """(the transpose of the stored input, the result's stored shape) for a view whose runs of merged or split dims
    are stored in another sequence than the result stores them, each run's dims in torch's order on both sides
    (MobileViT's fold: (N, ph, pw, h, w, C) permuted to (N, C, h, ph, w, pw) and viewed as (N, C, H, W), held
    (N, H, W, C)): one transpose where torch's order costs two. None for any other view."""
    new_shape = _resolved(torch_shape, sizes)
    runs = _runs(torch_shape, new_shape) if new_shape is not None else None
    if runs is None:
        return None
    run_of = {d: k for k, (_, new) in enumerate(runs) for d in new}
    sequence = []
    for d in out_order:
        if d in run_of and (not sequence or sequence[-1] != run_of[d]):
            sequence.append(run_of[d])
    if sorted(sequence) != list(range(len(runs))) or any(
            [d for d in out_order if run_of.get(d) == k] != list(runs[k][1]) for k in sequence):
        return None  # a run stored apart, or its dims out of torch's order
    in_runs = {d for old, _ in runs for d in old}
    perm = [order.index(d) for k in sequence for d in runs[k][0]] + \
        [order.index(d) for d in range(len(order)) if d not in in_runs]  # (size-1 dims: anywhere)
    out_shape = [new_shape[d] if new_shape[d] is not None else sizes[d] for d in out_order]
    # (a size known only when the model runs is a tensor: compared with -1 it is no bool, so it is tested first)
    if any(not isinstance(s, int) for s in out_shape) or sum(s == -1 for s in out_shape) > 1:
        out_shape = tf.stack([tf.cast(s, tf.int32) for s in out_shape])
    return perm, out_shape


def _split_runs_plan(torch_shape, order, out_order, sizes):
    """(the stored input's shape with each dim split into its run's new dims, the transpose to the result's storage)
    for a view each run of which splits one torch dim into several, or keeps it, stored by the result in another
    sequence (a batch folded into the channels and split out again, StyleGAN2's modulated convolution: (1, B*C, H,
    W) held (1, H, W, B*C) viewed as (B, C, H, W), held (B, H, W, C)): split where the dims lie, then one
    transpose, where torch's order costs two. None for any other view."""
    new_shape = _resolved(torch_shape, sizes)
    runs = _runs(torch_shape, new_shape) if new_shape is not None else None
    if runs is None or any(len(old) != 1 for old, _ in runs):
        return None
    split_of = {old[0]: new for old, new in runs}
    split_shape, labels = [], []
    for d in order:
        for n in split_of.get(d, ()):
            split_shape.append(new_shape[n] if new_shape[n] is not None else sizes[n])
            labels.append(n)
    for n in range(len(new_shape)):  # (the result's dims of size 1, in no run)
        if n not in labels:
            split_shape.append(1)
            labels.append(n)
    if sorted(labels) != sorted(out_order):
        return None
    if any(not isinstance(s, int) for s in split_shape) or sum(s == -1 for s in split_shape) > 1:
        if sum(isinstance(s, int) and s == -1 for s in split_shape) > 1:
            return None
        split_shape = tf.stack([tf.cast(s, tf.int32) for s in split_shape])
    return split_shape, [labels.index(n) for n in out_order]


def _resolved(torch_shape, sizes):
    """The view's sizes as ints where known (a -1 worked out when the input's size is), None where they are only
    known when the model runs (a batch read from the input), or None for a view that is not valid."""
    sizes = [_static_size(s) for s in sizes]
    if not sizes or sum(s == -1 for s in sizes) > 1 or any(s is not None and s < -1 for s in sizes):
        return None
    known = int(np.prod([s for s in sizes if s is not None and s != -1]))
    if None in torch_shape or None in sizes:
        return [None if s == -1 else s for s in sizes]
    total = int(np.prod(torch_shape))
    if -1 in sizes:
        if known == 0 or total % known:
            return None
        return [total // known if s == -1 else s for s in sizes]
    return sizes if known == total else None


def _static_size(size):
    """A view size as an int, or None when it is only known when the model runs."""
    if isinstance(size, (int, np.integer)):
        return int(size)
    static = tf.get_static_value(size) if hasattr(size, "dtype") else None
    return int(static) if static is not None and np.ndim(static) == 0 else None


def _runs(old_shape, new_shape):
    """Pair runs of adjacent old dims (torch's) with runs of adjacent new dims of equal size, matched from the last
    dim back; dims of size 1 belong to no run (they can go anywhere), and the leading dims left when a size is
    unknown (a batch, or a batch merged with the time axis) form one run. None when the sizes do not pair up."""
    old = [d for d, s in enumerate(old_shape) if s != 1]
    new = [d for d, s in enumerate(new_shape) if s != 1]
    runs, i, j = [], len(old), len(new)
    while i > 0 and j > 0 and old_shape[old[i - 1]] is not None and new_shape[new[j - 1]] is not None:
        start_i, start_j = i, j
        left, right = old_shape[old[i - 1]], new_shape[new[j - 1]]
        i, j = i - 1, j - 1
        while left != right:
            if left < right and i > 0 and old_shape[old[i - 1]] is not None:
                left, i = left * old_shape[old[i - 1]], i - 1
            elif right < left and j > 0 and new_shape[new[j - 1]] is not None:
                right, j = right * new_shape[new[j - 1]], j - 1
            else:
                break
        if left != right:  # an unknown size stops the run: it joins the leading one
            i, j = start_i, start_j
            break
        runs.insert(0, (old[i:start_i], new[j:start_j]))
    if i > 0 or j > 0:
        lead_old, lead_new = old[:i], new[:j]
        if not lead_old or not lead_new or (None not in [old_shape[d] for d in lead_old] + [
                new_shape[d] for d in lead_new]):
            return None  # all known and still unpaired: not a view of these sizes
        runs.insert(0, (lead_old, lead_new))
    return runs


def _stored_sequence(order, runs):
    """The runs in the order `order` stores them (dims in no run, of size 1, skipped), or None when a run's dims are
    not stored next to each other."""
    sequence = []
    for d in order:
        run = next((r for r, dims in enumerate(runs) if d in dims), None)
        if run is None:
            continue
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


def flatten_in_layout(input, positions):
    """torch's `flatten(start, end)` of a tensor whose merged dims (start first) are stored at axes `positions`,
    side by side in some order: the axes merge where they lie, and one gather puts the merged elements in torch's
    order when they are stored in another (a channel shuffle's `permute(0, 2, 1, 3, 4).flatten(1, 2)`)."""
    low, high = min(positions), max(positions)
    sizes = [_static_size(input.shape[p]) for p in range(low, high + 1)]
    shape = [input.shape[i] if input.shape[i] is not None else tf.shape(input)[i] for i in range(len(input.shape))]
    if any(s is None for s in sizes):  # sizes unknown when traced: the run put in torch's order first
        order = list(range(low)) + list(positions) + list(range(high + 1, len(shape)))
        input, shape = tf.transpose(input, order), [shape[i] for i in order]
        positions = sorted(positions)
    merged = tf.reshape(input, shape[:low] + [-1] + shape[high + 1:])
    if list(positions) == sorted(positions):
        return merged
    index = np.arange(int(np.prod(sizes))).reshape(sizes).transpose([p - low for p in positions]).reshape(-1)
    return merged if (index == np.arange(index.size)).all() else tf.gather(merged, index, axis=low)


def view_chain(input, order, steps, out_order):
    """torch's chain of views and permutes `steps` (("view", sizes) or ("permute", dims), in turn) of `input`, whose
    axes hold torch dims `order`; the result's axes are to hold its torch dims `out_order`. Each dim is followed as
    a product of factors of the stored axes (a view merging the batch with half the channels, ShuffleNetV2's
    `x.reshape(b * c // 2, 2, h * w).permute(1, 0, 2).reshape(2, -1, c // 2, h, w)`, only relabels the image's
    factors): where the result's factors come in the stored order, or reordered within runs, it is a reshape and a
    gather per reordered run (a transpose only where runs move). Exact for every chain torch accepts: when the sizes
    are not known when traced, or do not factor so, the chain runs in torch's order."""
    plan = _chain_plan([_static_size(s) for s in input.shape], order, steps, out_order)
    if plan is None:
        identity = list(range(len(order)))
        result = input if order == identity else tf.transpose(input, [order.index(d) for d in identity])
        for kind, argument in steps:
            result = tf.reshape(result, _sizes(argument)) if kind == "view" else tf.transpose(result, list(argument))
        return result if out_order == list(range(len(out_order))) else tf.transpose(result, out_order)
    block_shape, perm, gathers, out_shape = plan
    result = tf.reshape(input, block_shape)
    if perm != sorted(perm):
        result = tf.transpose(result, perm)
    for axis, index in gathers:
        result = tf.gather(result, index, axis=axis)
    return tf.reshape(result, out_shape)


def _sizes(sizes):
    return [s if isinstance(s, int) or not hasattr(s, "dtype") else tf.cast(s, tf.int32) for s in sizes]


def _chain_plan(stored_shape, order, steps, out_order):
    """(the input's shape as blocks of factors, the transpose of the blocks, [(axis, gather index)], the result's
    shape) for `view_chain`, or None when a size is unknown or a view does not split the factors it meets."""
    if None in stored_shape:
        return None
    size = {}  # factor -> its size
    dims = []  # torch dims of the current tensor, each a list of factors (outer first)
    for d in range(len(order)):
        size[d] = stored_shape[order.index(d)]
        dims.append([d])
    stored = [[d] for d in order]  # the input's axes, as factors
    for kind, argument in steps:
        if kind == "permute":
            dims = [dims[d % len(dims)] for d in argument]
            continue
        sizes = [_static_size(s) for s in argument]
        if None in sizes:
            return None
        dims = _viewed(dims, sizes, size, stored)
        if dims is None:
            return None
    wanted = [f for d in out_order for f in dims[d] if size[f] != 1]
    have = [f for axis in stored for f in axis if size[f] != 1]
    if sorted(wanted) != sorted(have):
        return None
    position = {f: i for i, f in enumerate(have)}
    blocks = []  # runs of the result's factors stored side by side in the input (in any order among themselves)
    for f in wanted:
        if blocks and _extends(blocks[-1], position[f], position):
            blocks[-1].append(f)
        else:
            blocks.append([f])
    by_start = sorted(range(len(blocks)), key=lambda b: min(position[f] for f in blocks[b]))
    block_shape = [int(np.prod([size[f] for f in sorted(blocks[b], key=position.get)])) for b in by_start]
    perm = [by_start.index(b) for b in range(len(blocks))]
    gathers = []
    for axis, block in enumerate(blocks):
        in_order = sorted(block, key=position.get)
        if in_order != block:
            index = np.arange(int(np.prod([size[f] for f in in_order]))).reshape([size[f] for f in in_order])
            index = index.transpose([in_order.index(f) for f in block]).reshape(-1)
            gathers.append((axis, tf.constant(index.astype(np.int32))))
    out_shape = [int(np.prod([size[f] for f in dims[d]])) for d in out_order]
    return block_shape, perm, gathers, out_shape


def _extends(block, new, position):
    """Whether factor position `new` keeps `block`'s positions one contiguous run."""
    taken = [position[f] for f in block] + [new]
    return max(taken) - min(taken) + 1 == len(taken)


def _viewed(dims, sizes, size, stored):
    """The torch dims after viewing `dims` (lists of factors) as `sizes` (a -1 resolved), splitting a factor where a
    size ends inside it (the outer part first, as in torch's row-major order); `size` and the input's axes `stored`
    are updated for the factors split. None when the sizes do not fit the factors."""
    flat = [f for dim in dims for f in dim if size[f] != 1]
    total = int(np.prod([size[f] for f in flat]))
    known = int(np.prod([s for s in sizes if s != -1]))
    if sizes.count(-1) > 1 or known == 0 or total % known:
        return None
    sizes = [total // known if s == -1 else s for s in sizes]
    if int(np.prod(sizes)) != total:
        return None
    result, i = [], 0
    for wanted in sizes:
        taken, need = [], wanted
        while need > 1:
            if i >= len(flat):
                return None
            f = flat[i]
            if need % size[f] == 0:
                taken.append(f)
                need //= size[f]
                i += 1
            elif size[f] % need == 0:  # the size ends inside this factor: split it
                outer, inner = len(size), len(size) + 1
                size[outer], size[inner] = need, size[f] // need
                for holder in (dims, stored):
                    for axis in holder:
                        if f in axis:
                            at = axis.index(f)
                            axis[at:at + 1] = [outer, inner]
                flat[i] = inner
                taken.append(outer)
                need = 1
            else:
                return None
        result.append(taken)
    return result
