"""einops' `rearrange`, `reduce`, `repeat`, `einsum`, `pack` and `unpack`, and its `Rearrange` / `Reduce` layers, on TensorFlow
tensors with einops' semantics (the port needs no einops on the TPU VM).

A pattern `left -> right` names the input's axes on the left, grouped in parentheses where one input axis holds
several (`b c (h p1) (w p2)`), `...` for any number of axes, `1` or `()` for an axis of size 1. The result is the
reshape of the input into its elementary axes, a reduction over those the right side omits (reduce), a transpose
into the right side's order, new axes broadcast in (repeat: names given as keyword lengths, or numbers), and a
reshape into the right side's groups. Sizes stay static where the input's are (an unknown batch is read from
tf.shape), so the ops compile under XLA.
"""

import math
import re

import numpy as np
import tensorflow as tf

from porter.runtime.base import TorchLayer, static_dims, to_channels_first, to_channels_last

_EINOPS_REDUCTIONS = {"sum": tf.reduce_sum, "mean": tf.reduce_mean, "max": tf.reduce_max, "min": tf.reduce_min,
                      "prod": tf.reduce_prod, "any": tf.reduce_any, "all": tf.reduce_all}
_EINOPS_TOKEN = re.compile(r"\.\.\.|\(|\)|[^\s()]+")


def _einops_side(text, pattern):
    """The groups of one side: lists of tokens (names, '...', or ints for anonymous sizes); a token outside
    parentheses is a one-token tuple (a bare '...' stands for several axes, a parenthesised one for their merge)."""
    groups, current = [], None
    for token in _EINOPS_TOKEN.findall(text):
        if token == "(":
            if current is not None:
                raise ValueError(f"einops: nested parentheses in {pattern!r}")
            current = []
        elif token == ")":
            if current is None:
                raise ValueError(f"einops: unbalanced parentheses in {pattern!r}")
            groups.append(current)
            current = None
        else:
            item = int(token) if token.isdigit() else token
            if isinstance(item, str) and item != "..." and not item.isidentifier():
                raise ValueError(f"einops: invalid axis name {token!r} in {pattern!r}")
            if current is None:
                groups.append((item,))
            else:
                current.append(item)
    if current is not None:
        raise ValueError(f"einops: unbalanced parentheses in {pattern!r}")
    return groups


def _einops_ellipsis(groups, count):
    """Groups with '...' replaced by `count` named axes."""
    names = [f"\u2026{i}" for i in range(count)]
    expanded = []
    for group in groups:
        if group == ("...",):
            expanded.extend([name] for name in names)
        else:
            expanded.append([n for token in group for n in (names if token == "..." else [token])])
    return expanded


def _einops_int(size):
    return size if isinstance(size, int) else tf.cast(size, tf.int32)


def _einops_product(sizes):
    if all(isinstance(size, int) for size in sizes):
        return math.prod(sizes)
    return tf.reduce_prod(tf.stack([_einops_int(size) for size in sizes]))


def _einops_recipe(x, pattern, axes_lengths):
    """(left elementary axes with their sizes, right groups) for `x` and `pattern`."""
    if "->" not in pattern:
        raise ValueError(f"einops: pattern {pattern!r} has no '->'")
    left_text, right_text = pattern.split("->")
    left, right = _einops_side(left_text, pattern), _einops_side(right_text, pattern)
    dims = static_dims(x)
    if any(token == "..." for group in left for token in group) or \
            any(token == "..." for group in right for token in group):
        count = len(dims) - (len(left) - 1)
        if count < 0:
            raise ValueError(f"einops: input of rank {len(dims)} has too few axes for {pattern!r}")
        left, right = _einops_ellipsis(left, count), _einops_ellipsis(right, count)
    if len(left) != len(dims):
        raise ValueError(f"einops: pattern {pattern!r} names {len(left)} axes, the input has {len(dims)}")
    sizes = dict(axes_lengths)
    elementary = []
    for group, dim in zip(left, dims):
        names = [token for token in group if not isinstance(token, int)]
        unknown = [name for name in names if name not in sizes]
        if len(unknown) > 1:
            raise ValueError(f"einops: cannot infer the sizes of {unknown} in {pattern!r}")
        if unknown:
            known = [sizes[name] for name in names if name in sizes]
            sizes[unknown[0]] = dim if not known else dim // _einops_product(known)
        elementary.extend((name, sizes[name]) for name in names)
    return elementary, right, sizes


def _einops_apply(x, pattern, reduction=None, axes_lengths=None):
    x = tf.convert_to_tensor(x)
    elementary, right, sizes = _einops_recipe(x, pattern, axes_lengths or {})
    left_names = [name for name, _ in elementary]
    x = tf.reshape(x, [_einops_int(size) for _, size in elementary]) if elementary else tf.reshape(x, [])
    right_names = [token for group in right for token in group if not isinstance(token, int)]
    reduced = [i for i, name in enumerate(left_names) if name not in right_names]
    if reduced:
        if reduction is None:
            raise ValueError(f"einops: {[left_names[i] for i in reduced]} are missing on the right of {pattern!r}")
        if callable(reduction):
            x = reduction(x, tuple(reduced))
        else:
            x = _EINOPS_REDUCTIONS[reduction](x, axis=reduced)
        left_names = [name for i, name in enumerate(left_names) if i not in reduced]
    kept = [name for name in right_names if name in left_names]
    order = [left_names.index(name) for name in kept]
    gathered = _einops_gathered(x, left_names, sizes, right) if order != sorted(order) else None
    if gathered is not None:
        return gathered
    if order != sorted(order):
        x = _einops_permute(x, order)
    # new axes (repeat) and anonymous sizes: inserted as size 1, then broadcast to their sizes
    target, position = [], 0
    for group in right:
        for token in group:
            if isinstance(token, int) or token not in left_names:
                size = token if isinstance(token, int) else sizes.get(token)
                if size is None:
                    raise ValueError(f"einops: give the size of new axis {token!r} of {pattern!r} as a keyword")
                x = tf.expand_dims(x, position)
                target.append(size)
            else:
                target.append(sizes[token])
            position += 1
    if any(size != 1 for size, token in zip(target, [t for g in right for t in g])
           if isinstance(token, int) or token not in left_names):
        x = tf.broadcast_to(x, [_einops_int(size) for size in target])
    shape = [_einops_product([target[i] for i in indices]) for indices in _einops_group_indices(right)]
    return tf.reshape(x, [_einops_int(size) for size in shape])


def _einops_gathered(x, left_names, sizes, right):
    """The rearrangement when each right group merges a run of adjacent left axes, in the runs' order, reordered only
    inside a run (`b h w (g c) -> b h w (c g)`, a channel shuffle): a reshape into the groups and a gather along each
    reordered one, with an index fixed when traced, instead of a transpose of the whole tensor; None otherwise."""
    position, shape, gathers = 0, [], []
    for axis, group in enumerate(right):
        if any(isinstance(token, int) or token not in left_names for token in group):
            return None
        indices = [left_names.index(token) for token in group]
        if sorted(indices) != list(range(position, position + len(indices))):
            return None
        position += len(indices)
        shape.append(_einops_product([sizes[token] for token in group]))
        if indices != sorted(indices):
            run = [sizes[left_names[i]] for i in sorted(indices)]
            if not all(isinstance(size, int) for size in run):
                return None
            start = position - len(indices)
            index = np.arange(math.prod(run)).reshape(run).transpose([i - start for i in indices]).reshape(-1)
            gathers.append((axis, index))
    if position != len(left_names):
        return None
    x = tf.reshape(x, [_einops_int(size) for size in shape])
    for axis, index in gathers:
        x = tf.gather(x, index, axis=axis)
    return x


def _einops_permute(x, order):
    """tf.transpose(x, order), as a reshape when only size-1 axes move (one attention head split off: no data
    moves, no Transpose traced)."""
    sizes = list(x.shape)
    moved = [axis for axis in order if sizes[axis] != 1]
    if moved == sorted(moved) and sum(1 for axis in order if sizes[axis] is None) <= 1:
        return tf.reshape(x, [-1 if sizes[axis] is None else sizes[axis] for axis in order])
    return tf.transpose(x, order)


def _einops_group_indices(groups):
    indices, position = [], 0
    for group in groups:
        indices.append(list(range(position, position + len(group))))
        position += len(group)
    return indices


def einops_rearrange(tensor, pattern, **axes_lengths):
    """einops.rearrange: reorder, split and merge axes (a list of tensors is stacked first, as einops does)."""
    if isinstance(tensor, (list, tuple)):
        tensor = tf.stack(tensor)
    return _einops_apply(tensor, pattern, None, axes_lengths)


def einops_reduce(tensor, pattern, reduction, **axes_lengths):
    """einops.reduce: rearrange, reducing with `reduction` ('sum', 'mean', 'max', 'min', 'prod') over the axes the
    right side leaves out."""
    if isinstance(tensor, (list, tuple)):
        tensor = tf.stack(tensor)
    return _einops_apply(tensor, pattern, reduction, axes_lengths)


def einops_repeat(tensor, pattern, **axes_lengths):
    """einops.repeat: rearrange, with new axes (sizes by keyword or as numbers) repeated along."""
    if isinstance(tensor, (list, tuple)):
        tensor = tf.stack(tensor)
    return _einops_apply(tensor, pattern, None, axes_lengths)


def einops_einsum(*tensors_and_pattern):
    """einops.einsum(x, y, ..., 'b i d, b j d -> b i j'): multi-letter axis names, tensors first, pattern last."""
    *tensors, pattern = tensors_and_pattern
    left, right = pattern.split("->")
    letters = {}

    def spell(side):
        out = []
        for token in _EINOPS_TOKEN.findall(side):
            if token == "...":
                out.append("...")
            elif token not in ("(", ")"):
                letters.setdefault(token, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[len(letters)])
                out.append(letters[token])
        return "".join(out)

    inputs = ",".join(spell(part) for part in left.split(","))
    return tf.einsum(f"{inputs}->{spell(right)}", *tensors)


def _einops_pack_axes(pattern):
    """(axes before '*', axes after '*') of a pack/unpack pattern such as 'b * d'."""
    names = pattern.split()
    if names.count("*") != 1 or any(n != "*" and not n.isidentifier() for n in names):
        raise ValueError(f"einops: a pack pattern names axes and one '*', got {pattern!r}")
    star = names.index("*")
    return star, len(names) - star - 1


def einops_pack(tensors, pattern):
    """einops.pack: each tensor's axes under '*' merged into one, the tensors concatenated along it; returns the
    packed tensor and the shapes '*' stood for (for einops_unpack)."""
    before, after = _einops_pack_axes(pattern)
    merged, packed_shapes = [], []
    for x in tensors:
        x = tf.convert_to_tensor(x)
        dims = static_dims(x)
        if len(dims) < before + after:
            raise ValueError(f"einops: pack pattern {pattern!r} needs rank >= {before + after}, got {len(dims)}")
        star = dims[before:len(dims) - after]
        packed_shapes.append(tuple(star))
        shape = [_einops_int(d) for d in dims[:before]] + [_einops_int(_einops_product(star))] + \
            [_einops_int(d) for d in dims[len(dims) - after:]]
        merged.append(tf.reshape(x, shape))
    return tf.concat(merged, axis=before), packed_shapes


def einops_unpack(tensor, packed_shapes, pattern):
    """einops.unpack: the inverse of einops_pack: the '*' axis split into the packed shapes."""
    before, after = _einops_pack_axes(pattern)
    tensor = tf.convert_to_tensor(tensor)
    dims = static_dims(tensor)
    sizes = [_einops_product(shape) for shape in packed_shapes]
    splits = sizes if all(isinstance(size, int) for size in sizes) else tf.stack([_einops_int(s) for s in sizes])
    parts = tf.split(tensor, splits, axis=before)
    return [tf.reshape(part, [_einops_int(d) for d in dims[:before]] + [_einops_int(d) for d in shape] +
                       [_einops_int(d) for d in dims[len(dims) - after:]])
            for part, shape in zip(parts, packed_shapes)]


_EINOPS_GROUP = re.compile(r"\([^)]*\)|[^\s()]+")


def _einops_channels_last_side(side):
    """One pattern side's groups in the order a channels-last tensor stores them (`b c h w` -> `b h w c`)."""
    groups = _EINOPS_GROUP.findall(side)
    return " ".join(groups if len(groups) < 3 else [groups[0], *groups[2:], groups[1]])


def _einops_moves_axes(pattern):
    """Whether `pattern` changes the order of the axes both its sides name (a transpose), not only groups, splits
    or reduces them (a reshape, a reduction)."""
    left, right = (re.findall(r"[A-Za-z_]\w*", side) for side in pattern.split("->"))
    return [a for a in left if a in right] != [a for a in right if a in left]


def _einops_layout_pattern(pattern, layout, layout_out):
    """`pattern` run on a tensor held in `layout` giving its result in `layout_out` ("source" = torch's order or
    "channels_last"): the sides read and written in the order the tensors are stored, so no conversion runs."""
    left, right = pattern.split("->")
    if layout == "channels_last":
        left = _einops_channels_last_side(left)
    if layout_out == "channels_last":
        right = _einops_channels_last_side(right)
    return f"{left.strip()} -> {right.strip()}"


class _EinopsLayer(TorchLayer):
    """Shared layout handling of the einops layers: in a container they read the layout the tensor is held in and
    write the one the next layer wants (a Conformer's `Rearrange('b n c -> b c n')` before a Conv1d runs as no
    transpose at all); alone they take and give torch's order."""

    writes_any_layout = True  # the pattern's right side is written in the order wanted, at no cost

    def runs_in(self, layout):
        return type(self).call in (Rearrange.call, Reduce.call, RearrangeChannelsLast.call, ReduceChannelsLast.call) and self.pattern.count("->") == 1 and \
            (layout == "source" or "..." not in self.pattern)

    def free_layout(self, layout):
        """The layout to write a tensor held in `layout` in when the next layers take either: one the pattern
        reaches as a reshape (no axis moves), the one held first, else the one held."""
        if "..." in self.pattern:
            return layout
        other = "channels_last" if layout == "source" else "source"
        for written in (layout, other):
            if not _einops_moves_axes(_einops_layout_pattern(self.pattern, layout, written)):
                return written
        return layout

    def _run(self, x, reduction, layout, layout_out):
        layout, layout_out = layout or self.porter_layout, layout_out or self.porter_layout
        if "..." not in self.pattern:
            pattern = _einops_layout_pattern(self.pattern, layout, layout_out)
            return _einops_apply(x, pattern, reduction, self.axes_lengths)
        y = _einops_apply(to_channels_first(x) if layout == "channels_last" else x, self.pattern, reduction,
                          self.axes_lengths)
        return to_channels_last(y) if layout_out == "channels_last" else y


class Rearrange(_EinopsLayer):
    """einops.layers.torch.Rearrange(pattern, **axes_lengths): rearrange as a layer (no weights)."""

    def __init__(self, pattern, **axes_lengths):
        keras_kwargs = {k: axes_lengths.pop(k) for k in ("name", "dtype", "trainable") if k in axes_lengths}
        super().__init__(**keras_kwargs)
        self.pattern, self.axes_lengths = pattern, axes_lengths
        self.finish_init()

    def call(self, x, layout=None, layout_out=None):
        return self._run(x, None, layout, layout_out)

    def get_config(self):
        return {**super().get_config(), "pattern": self.pattern, **self.axes_lengths}


class Reduce(_EinopsLayer):
    """einops.layers.torch.Reduce(pattern, reduction, **axes_lengths): reduce as a layer (no weights)."""

    def __init__(self, pattern, reduction, **axes_lengths):
        keras_kwargs = {k: axes_lengths.pop(k) for k in ("name", "dtype", "trainable") if k in axes_lengths}
        super().__init__(**keras_kwargs)
        self.pattern, self.reduction, self.axes_lengths = pattern, reduction, axes_lengths
        self.finish_init()

    def call(self, x, layout=None, layout_out=None):
        return self._run(x, self.reduction, layout, layout_out)

    def get_config(self):
        return {**super().get_config(), "pattern": self.pattern, "reduction": self.reduction, **self.axes_lengths}


class RearrangeChannelsLast(Rearrange):
    """A Rearrange whose pattern keeps an image (porter/rules/einops.py picks it from the literal pattern): alone it
    takes and gives channels-last (space-to-depth between convs moves no layout)."""

    porter_layout = "channels_last"


class ReduceChannelsLast(Reduce):
    """A Reduce that pools an image to its channels (`b c h w -> b c`) or keeps an image: alone it takes and gives
    channels-last (a hybrid's pooling head after its convs reads them as they are)."""

    porter_layout = "channels_last"
