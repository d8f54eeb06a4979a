"""einops `rearrange` without moving data: a literal pattern that splits and merges axes and reorders them is run
as a reshape, and the reorder is left pending (the result's layout records its physical order, see
`porter/ir/values.py` permuted layouts), for the consumer that can read it in place: an einsum or matmul (heads
split as `b n (h d) -> b h n d` feed attention scores with no Transpose), or an einsum producer re-emitted in
the order the pattern wants (`b h n d -> b n (h d)` after `attn @ v`). Patterns this cannot express (anonymous
axes, `...`, a merge of axes the data does not hold next to each other) return None: the caller's plain path."""

import re

from porter.ir.values import EinsumRecipe, permuted_layout, physical_order, tensor

_GROUP = re.compile(r"\(([^)]*)\)|(\S+)")


def _groups(side):
    """Names of each group of one pattern side (`b n (h d)` -> [[b], [n], [h, d]]), or None for `...`, numbers,
    `()` or `1`."""
    groups = []
    for parenthesised, bare in _GROUP.findall(side):
        names = parenthesised.split() if parenthesised or not bare else [bare]
        if not names or any(not n.isidentifier() for n in names):
            return None
        groups.append(names)
    return groups


def pending_rearrange(ctx, value, pattern, arguments_code):
    """(code, result Value) of `einops.rearrange(value, pattern, ...)` with no Transpose, or None.

    `arguments_code`: the axis-length keywords as code (`, h=self.heads`)."""
    if not isinstance(pattern, str) or pattern.count("->") != 1 or "..." in pattern or not value.is_tensor or \
            value.layout not in ("source",) and not value.layout.startswith("permuted:") and not value.channels_last:
        return None
    left_text, right_text = pattern.split("->")
    left, right = _groups(left_text), _groups(right_text)
    if left is None or right is None:
        return None
    names = [n for g in left for n in g]
    if sorted(names) != sorted(n for g in right for n in g) or len(set(names)) != len(names):
        return None
    rank = value.rank if value.rank is not None else len(left)
    if rank != len(left):
        return None
    order = physical_order(value.but(rank=rank))
    runtime = ctx.runtime("einops_rearrange")
    recipe = value.static if isinstance(value.static, EinsumRecipe) and value.static.still_valid() else None
    if recipe is not None:
        # the einsum writes its output in the order the right side reads its axes: one reshape after it; an image
        # (`b h c (x y) -> b (h c) x y`) is written channels-last, as the convolutions after it take it
        letters = {tuple(left[d]): recipe.output[order.index(d)] for d in range(rank)}
        image = _unfolds_tokens(left, right)
        singletons = all(len(g) == 1 for g in left)  # (else torch's order is no better than the plain path's)
        for groups, channels_last in ((([right[0], *right[2:], right[1]], True),) if image else ()) + (
                ((right, False),) if singletons else ()):
            written = _left_groups_in_order([n for g in groups for n in g], left)
            if written is None:
                continue
            source = recipe.code("".join(letters[tuple(g)] for g in written))
            physical = f"{' '.join(_side(g) for g in written)} -> {' '.join(_side(g) for g in groups)}"
            result = tensor("", len(right), "channels_last") if channels_last else tensor("", len(right))
            return f"{runtime}({source}, {physical!r}{arguments_code})", result
    physical_left = [left[d] for d in order]
    elementary = [n for g in physical_left for n in g]
    placed = sorted(range(len(right)), key=lambda i: elementary.index(right[i][0]))
    if [n for i in placed for n in right[i]] != elementary:
        return None  # a merge of axes the data does not hold side by side: a real transpose
    physical = f"{' '.join(_side(g) for g in physical_left)} -> {' '.join(_side(right[i]) for i in placed)}"
    code = f"{runtime}({value.code}, {physical!r}{arguments_code})"
    result = tensor("", len(right))
    if len(right) > 2 and placed == [0] + list(range(2, len(right))) + [1]:
        result = tensor("", len(right), "channels_last")  # `b (h w) c -> b c h w`: an image, held channels-last
    elif placed != list(range(len(right))):
        result = result.but(layout=permuted_layout(placed))
    return code, result


def _unfolds_tokens(left, right):
    """Whether the right side is an image whose spatial axes are one left group of tokens split apart
    (`b h (x y) d -> b (h d) x y`): then it is written channels-last."""
    return len(right) >= 4 and any(len(g) == len(right) - 2 and right[2:] == [[n] for n in g] for g in left) and \
        not set(right[1]) & {n for g in right[2:] for n in g}


def _left_groups_in_order(names, left):
    """The left side's groups in the order that spells `names` (each group's names side by side), or None."""
    written, at = [], 0
    while at < len(names):
        group = next((g for g in left if names[at:at + len(g)] == g and g not in written), None)
        if group is None:
            return None
        written.append(group)
        at += len(group)
    return written


def _side(group):
    return group[0] if len(group) == 1 else f"({' '.join(group)})"
