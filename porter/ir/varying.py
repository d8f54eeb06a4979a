"""Which torch dims a tensor's values differ along, for tensors built from sizes: a coordinate map
(`torch.arange(w).repeat(n, 1, h, 1)`), a `linspace` expanded over an image, a constant. Along every other dim the
values are copies, so the tensor takes any axis order without moving data when the dims it differs along keep their
order: it is read once along them, reshaped and broadcast again (the runtime's `permute_broadcast`), and bringing it
to the layout its consumer holds traces no Transpose.

`Value.varies_along` holds those dims (torch's numbering, whatever the layout; None: nothing known, any dim).
"""

from porter.ir.values import physical_order

# creation ops whose result differs along its one dim, or along none
CREATED_ALONG_ONE = frozenset({"torch.arange", "torch.linspace", "torch.logspace"})
CREATED_CONSTANT = frozenset({"torch.zeros", "torch.ones", "torch.full", "Tensor.new_zeros", "Tensor.new_ones",
                              "Tensor.new_full"})
# ops whose result copies its first operand's values over new or repeated dims (right-aligned, as torch broadcasts)
COPIES_OVER_DIMS = frozenset({"Tensor.repeat", "Tensor.expand", "torch.broadcast_to", "Tensor.broadcast_to"})
# casts: the values of the first operand, another dtype (`type_as`'s other operand gives only its dtype)
CASTS = frozenset({"Tensor.type_as", "Tensor.to", "Tensor.type", "Tensor.float", "Tensor.double", "Tensor.half",
                   "Tensor.bfloat16", "Tensor.long", "Tensor.int", "Tensor.contiguous", "Tensor.clone",
                   "torch.clone", "Tensor.detach", "torch.detach"})
# elementwise rules whose values are drawn, not computed from their operands
RANDOM = frozenset({"torch.rand_like", "torch.randn_like"})
TRANSPOSES = frozenset({"torch.transpose", "Tensor.transpose", "torch.swapaxes", "Tensor.swapaxes", "torch.swapdims",
                        "Tensor.swapdims"})
PERMUTES = frozenset({"torch.permute", "Tensor.permute"})
UNSQUEEZES = frozenset({"torch.unsqueeze", "Tensor.unsqueeze"})
VIEWS = frozenset({"Tensor.view", "Tensor.reshape", "torch.reshape"})


def varying_after(canonical, pointwise, args, result):
    """The dims the result of the op `canonical` (`pointwise`: an elementwise rule) on `args` differs along, or None."""
    if not result.is_tensor or result.rank is None:
        return None
    if canonical in CREATED_ALONG_ONE:
        return (0,) if result.rank == 1 else None
    if canonical in CREATED_CONSTANT:
        return ()
    first = args[0] if args else None
    if canonical in UNSQUEEZES and first is not None and first.is_tensor and first.varies_along is None and \
            first.rank is not None:  # (a tensor porter knows nothing of varies along all its dims, not the new one)
        first = first.but(varies_along=tuple(range(first.rank)))
    if first is None or not first.is_tensor or first.varies_along is None or first.rank is None:
        return None
    if canonical in COPIES_OVER_DIMS or canonical in CASTS:
        return aligned(first.varies_along, first.rank, result.rank)
    if canonical in TRANSPOSES or canonical in PERMUTES:
        dims = _static_ints(args[1:])
        if canonical in TRANSPOSES and len(dims) == 2 and result.rank == first.rank:
            swap = {dims[0] % first.rank: dims[1] % first.rank, dims[1] % first.rank: dims[0] % first.rank}
            return tuple(sorted(swap.get(d, d) for d in first.varies_along))
        if canonical in PERMUTES and len(dims) == first.rank == result.rank:
            dims = [d % first.rank for d in dims]
            return tuple(sorted(dims.index(d) for d in first.varies_along))
        return None
    if canonical in UNSQUEEZES:
        dims = _static_ints(args[1:2])
        if len(dims) == 1 and result.rank == first.rank + 1:
            dim = dims[0] % result.rank
            return tuple(d + 1 if d >= dim else d for d in first.varies_along)
        return None
    if canonical in VIEWS and first.rank == 1:  # a vector given size-1 dims around it (`.view(1, 1, 1, w)`)
        sizes = list(args[1:])
        if len(sizes) == 1 and sizes[0].kind == "tuple" and sizes[0].items is not None:
            sizes = list(sizes[0].items)
        longer = [i for i, size in enumerate(sizes) if size.static != 1]
        if len(sizes) == result.rank and len(longer) == 1 and all(size.kind == "python" for size in sizes):
            return tuple(longer) if first.varies_along else ()
        return None
    if pointwise and canonical not in RANDOM:
        return joined([a for a in args if a.kind in ("tensor", "python")], result.rank)
    return None


def joined(operands, rank):
    """The dims an elementwise result of `rank` differs along: those of every tensor operand, broadcast right-aligned
    (Python numbers differ along none); None when an operand's are unknown."""
    dims = set()
    for operand in operands:
        if not operand.is_tensor:
            continue
        if operand.varies_along is None or operand.rank is None or rank is None or operand.rank > rank:
            return None
        dims.update(aligned(operand.varies_along, operand.rank, rank))
    return tuple(sorted(dims))


def aligned(dims, rank, new_rank):
    """`dims` of a tensor of `rank` broadcast right-aligned to `new_rank` dims."""
    if new_rank is None or new_rank < rank:
        return None
    return tuple(d + new_rank - rank for d in dims)


def moved_without_transpose(value, perm):
    """The stored axes `value` differs along when a permutation `perm` of its stored axes needs no data moved
    (those axes keep their order), else None."""
    if value.varies_along is None or value.rank is None:
        return None
    order = physical_order(value)
    axes = sorted(order.index(d) for d in value.varies_along)
    return axes if [a for a in perm if a in axes] == axes else None


def _static_ints(values):
    ints = []
    for value in values:
        static = value.static
        if isinstance(static, (tuple, list)):
            ints.extend(static)
        else:
            ints.append(static)
    return ints if all(isinstance(i, int) and not isinstance(i, bool) for i in ints) else []


def assigned_into(value, name):
    """`value` after an item assignment, bound to `name`: its values now differ wherever the assigned part does
    (`outputs = torch.zeros(T, B, C)` then `outputs[t] = step`: no longer a constant whose copies may be broadcast)."""
    return value.but(code=name, varies_along=None)  # (its dtype kept: torch casts what it assigns)
