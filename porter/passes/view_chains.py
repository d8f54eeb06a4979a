"""A run of statements rebinding one name through views and permutes of an image held channels-last (megvii's
ShuffleNetV2 channel shuffle: `x = x.reshape(b * c // 2, 2, h * w)`, `x = x.permute(1, 0, 2)`, `x = x.reshape(2,
-1, c // 2, h, w)`), translated as one regrouping: the runtime's `view_chain` follows every dim as a product of the
stored image's factors, so a view merging the batch with half the channels, which no layout of the image holds
without moving data, only relabels factors on the way. Translated one at a time, each view moved the image into
torch's order and back (about 7 Transposes per block).

The result is held with the final view's batch first, its spatial sizes next and the rest (channel groups, a
number such as the shuffle's 2) last, so selecting along the rest (`x[0]`) leaves a channels-last image; where the
last view names no spatial sizes (MobileViT's unfold into patch tokens, `(B * patch_area, num_patches, -1)`), in
torch's order: one transpose of the image's factors instead of a conversion and a transpose per step. A chain from
a tensor in torch's order is taken where its last view is an image, `(N, C, spatial...)` with C a channel count
(MobileViT's fold of the tokens back): the result is held channels-last. Every chain makes at least two views and
one permute; anything else is translated statement by statement as before.
"""

import libcst as cst

VIEWS = frozenset({"view", "reshape"})
PERMUTES = frozenset({"permute", "transpose", "swapaxes", "swapdims"})
KEPT = frozenset({"contiguous"})


class ViewChain:
    """Statements `count` long rebinding `target` from `source` through `steps` ([(method, cst.Call)])."""

    def __init__(self, count, target, source, steps, statements):
        self.count, self.target, self.source, self.steps, self.statements = count, target, source, steps, statements


def view_chain_at(statements, index):
    """The ViewChain starting at `statements[index]`, or None."""
    steps, target, source, count = [], None, None, 0
    for statement in statements[index:]:
        parsed = _chain_statement(statement)
        if parsed is None:
            break
        name, receiver, calls = parsed
        if target is None:
            target, source = name, receiver
        elif name != target or receiver != target:
            break
        steps.extend(calls)
        count += 1
    methods = [method for method, _ in steps]
    if count == 0 or sum(m in VIEWS for m in methods) < 2 or not any(m in PERMUTES for m in methods) or \
            methods[-1] not in VIEWS:
        return None
    return ViewChain(count, target, source, steps, statements[index:index + count])


def _chain_statement(statement):
    """(assigned name, receiver name, [(method, call)]) for `name = receiver.m1(...).m2(...)` whose methods are views,
    permutes or `contiguous`, else None."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1 or \
            statement.trailing_whitespace.comment is not None:
        return None
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or \
            not isinstance(assign.targets[0].target, cst.Name):
        return None
    calls, node = [], assign.value
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
            node.func.attr.value in VIEWS | PERMUTES | KEPT:
        if any(arg.star or arg.keyword is not None for arg in node.args):
            return None
        calls.insert(0, (node.func.attr.value, node))
        node = node.func.value
    if not calls or not isinstance(node, cst.Name):
        return None
    return assign.targets[0].target.value, node.value, [(m, c) for m, c in calls if m not in KEPT]


def permutation(method, values, rank):
    """The dims of a permute step (`permute(1, 0, 2)`, `transpose(0, 1)` at `rank`) from its argument Values, or
    None when they are not literal ints."""
    if len(values) == 1 and isinstance(values[0].static, (tuple, list)):
        dims = list(values[0].static)
    else:
        dims = [v.static for v in values]
    if not dims or any(not isinstance(d, int) or isinstance(d, bool) for d in dims):
        return None
    if method == "permute":
        return [d % rank for d in dims] if sorted(d % rank for d in dims) == list(range(rank)) else None
    if len(dims) != 2:
        return None
    a, b = (d % rank for d in dims)
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return perm


def held_order(sizes):
    """The stored order for the chain's last view's `sizes` (Values): the batch (the first size unless it is a
    number, a channel or spatial size; else the one -1), the spatial sizes, then the rest; None when they do not
    name a batch and spatial sizes."""
    first = sizes[0]
    if not (isinstance(first.static, int) or first.spatial_size or first.channel_count or first.channel_part):
        batch = 0
    elif sum(s.static == -1 for s in sizes) == 1:
        batch = next(i for i, s in enumerate(sizes) if s.static == -1)
    else:
        return None
    spatial = [i for i, s in enumerate(sizes) if s.spatial_size and i != batch]
    if not spatial:
        return None
    return [batch] + spatial + [i for i in range(len(sizes)) if i != batch and i not in spatial]


def image_order(sizes):
    """The channels-last order for a chain's last view `sizes` from a tensor in torch's layout, where they name an
    image as torch lays one out: (N, C, spatial...) with C read as a channel count (MobileViT's fold, `(B, C,
    num_patch_h * patch_h, num_patch_w * patch_w)`); None otherwise (Swin's `(-1, H, W, C)`: its sizes are flagged
    by their place in an NCHW tensor, which its (B, H, W, C) tensors are not)."""
    if not 3 <= len(sizes) <= 5 or not sizes[1].channel_count or any(s.channel_count for s in sizes[2:]):
        return None
    return [0, *range(2, len(sizes)), 1]
