"""Layout of Values: the code that moves a value between torch's layout and channels-last, the layout operands
of one op agree on, and the layout the elements of a list share.

Shared by the passes and the op rules (rules never import passes). Conversions go through runtime helpers
(`to_channels_last`, `to_channels_first`, `broadcast_channels_last`) that use a reshape instead of a Transpose
whenever only size-1 axes move.
"""

from porter.ir.op_nodes import record
from porter.ir.values import (
    EinsumRecipe,
    Value,
    is_permuted,
    may_be_images,
    permuted_layout,
    physical_order,
    tensor,
)
from porter.ir.varying import moved_without_transpose


def settle(value, wanted_order=None, ctx=None):
    """A lazily permuted tensor made real: re-emit its einsum in the wanted order, else one transpose
    (`permute_axes`: a reshape when only size-1 axes move, as in a swap of a cardinality-1 group axis)."""
    order = physical_order(value)
    wanted_order = list(range(value.rank)) if wanted_order is None else wanted_order
    recipe = value.static if isinstance(value.static, EinsumRecipe) and (
        value.static.still_valid() or value.code == value.static.code()) else None  # (or not yet emitted: the
    # einsum is written once either way, in the order wanted)
    if recipe is not None:
        output = "".join(recipe.output[order.index(d)] for d in wanted_order)
        return recipe.code(output)
    perm = [order.index(d) for d in wanted_order]
    copied = moved_without_transpose(value, perm) if ctx is not None else None
    if copied is not None:  # (built from sizes: its copies broadcast again in the new order)
        return f"{ctx.use('permute_broadcast')}({value.code}, {perm}, {copied})"
    if ctx is not None:
        ctx.use("permute_axes")
        return f"permute_axes({value.code}, {perm})"
    return f"tf.transpose({value.code}, {perm})"


def to_layout(ctx, value, wanted, rank=None):
    """`value` converted to `wanted` ("channels_last" | "source" | "any")."""
    if not value.is_tensor or wanted == "any" or value.layout == "raises":
        return value
    if is_permuted(value):
        if wanted == "channels_last" and value.rank > 2:
            cl_order = [0] + list(range(2, value.rank)) + [1]
            return tensor(settle(value, cl_order, ctx), value.rank, "channels_last").but(
                dtype=value.dtype, varies_along=value.varies_along)
        value = tensor(settle(value, ctx=ctx), value.rank, "source").but(dtype=value.dtype,
                                                                         varies_along=value.varies_along)
    if value.layout == "flat_channels_last":
        ctx.use("flat_to_torch_order")
        value = tensor(f"flat_to_torch_order({value.code}, {value.channels})", 2).but(dtype=value.dtype)
    if wanted == "source":
        if not value.channels_last:
            return value
        built = _built_in_order(ctx, value, "source")
        if built is not None:
            return built
        ctx.use("to_channels_first")
        if may_be_images(value):  # an image here, a list of images under a flag
            result = tensor(f"{ctx.use('each_image')}(to_channels_first, {value.code})", value.rank, "source")
            record(ctx, "convert", "to_channels_first", value.code, [value], result)
            return result
        result = tensor(f"to_channels_first({value.code})", value.rank, "source")
        record(ctx, "convert", "to_channels_first", value.code, [value], result)
        return result
    if value.channels_last:
        return value
    rank = value.rank if value.rank is not None else rank
    if rank is not None and rank <= 2:
        return value.but(rank=rank)
    built = _built_in_order(ctx, value.but(rank=rank), "channels_last")
    if built is not None:
        return built
    ctx.use("to_channels_last")
    record(ctx, "convert", "to_channels_last", value.code, [value], tensor("", rank, "channels_last"))
    hoister = getattr(ctx, "hoister", None)
    if hoister is not None and value.code.isidentifier():
        name = hoister.hoist(value.code, f"to_channels_last({value.code})", "channels_last")
        if name is not None:  # (None: a name a comprehension binds, converted where it is read)
            return tensor(name, rank, "channels_last").but(layout="channels_last", dtype=value.dtype)
    return tensor(f"to_channels_last({value.code})", rank, "channels_last").but(layout="channels_last")


def _built_in_order(ctx, value, wanted):
    """A tensor built from sizes (a coordinate map) moved to `wanted` ("source" | "channels_last") by broadcasting its
    copies again in that order (`permute_broadcast`: no data transposed), or None when it differs along dims whose
    order changes (or nothing is known of it)."""
    if value.rank is None or value.rank <= 2 or value.varies_along is None:
        return None
    channels_last = [0] + list(range(2, value.rank)) + [1]
    order = physical_order(value)
    wanted_order = channels_last if wanted == "channels_last" else list(range(value.rank))
    code = broadcast_in_order_code(ctx.use, value, [order.index(d) for d in wanted_order])
    if code is None:
        return None
    return tensor(code, value.rank, wanted).but(dtype=value.dtype, varies_along=value.varies_along)


def broadcast_in_order_code(use, value, perm):
    """The code of tensor `value` with its stored axes permuted by `perm` by broadcasting its copies again in that
    order (`permute_broadcast`: a repeat, an expand or a coordinate map moves no data), or None when it differs
    along axes whose order changes (or nothing is known of it). `use`: the runtime name's emitted name (the
    translation context's `use`, a rule context's `runtime`)."""
    copied = moved_without_transpose(value, perm)
    return None if copied is None else f"{use('permute_broadcast')}({value.code}, {perm}, {copied})"


def unify(ctx, values, unknown_rank=True):
    """Bring tensor operands of an elementwise op to one layout; returns (converted values, layout, rank).
    `unknown_rank`: the caller takes a channels-last result of unknown rank (an elementwise op needs no axis; a
    concatenation along another dim than the channels' does, and passes False)."""
    if any(v.is_tensor and v.layout == "flat_channels_last" for v in values):
        values = [to_layout(ctx, v, "source") if v.is_tensor and v.layout == "flat_channels_last" else v
                  for v in values]
    tensors = [v for v in values if v.is_tensor]
    if _settle_free_to(tensors):  # (a (nW, N, N) mask given size-1 dims meets attention scores in torch's order)
        values = [to_layout(ctx, v, "source") if v.is_tensor and _only_unit_dims_moved(v) else v for v in values]
        tensors = [v for v in values if v.is_tensor]
    permuted = [v for v in tensors if is_permuted(v)]
    if len({v.layout for v in permuted}) > 1:  # (SKNet's branch weights viewed (B, M, C, 1, 1) meet the stacked
        # branches held (B, H, W, M, C): the weights' size-1 dims move, a reshape)
        values = _aligned_by_unit_dims(ctx, values, permuted)
        tensors = [v for v in values if v.is_tensor]
        permuted = [v for v in tensors if is_permuted(v)]
    if permuted:
        if len(tensors) == len(permuted) and len({v.layout for v in tensors}) == 1 and len(
                {v.rank for v in tensors}) == 1 and not _settle_apart(tensors):
            return list(values), tensors[0].layout, tensors[0].rank  # same pending transpose: stays pending
        joined = None if _settle_apart(permuted) else _joined_to_permuted(ctx, values, permuted)
        if joined is not None:
            return joined
        # (to the channels-last images among the others where they have its rank: one transpose, composed, a
        # reshape where only size-1 axes move: coordinate attention's `pool_w(x).permute(0, 1, 3, 2)`)
        ranks = {v.rank for v in tensors if v.channels_last and not is_permuted(v)}
        values = [to_layout(ctx, v, "channels_last" if v.rank in ranks and v.rank is not None else "source")
                  if is_permuted(v) else v for v in values]
        tensors = [v for v in values if v.is_tensor]
    # a channels-last image of unknown rank (a module's output call_module keeps channels-last) meets one of known
    # rank: they are one image shape, the known one leads
    leader = next((v for v in tensors if v.channels_last and v.rank is not None), None) or next(
        (v for v in tensors if v.channels_last), None)
    if leader is None:
        ranks = [v.rank for v in tensors]
        rank = max(ranks) if ranks and None not in ranks else None
        return list(values), "source", rank
    if leader.rank is None and unknown_rank and all(v.channels_last for v in tensors):
        # images held channels-last, none of known rank (`self.body(x) + identity`, both results of modules
        # call_module keeps channels-last): one layout already; a tensor of rank <= 2 has no other
        return list(values), "channels_last", None
    if leader.rank is None and unknown_rank and leader.code.isidentifier():
        # an image of unknown rank (a module's output call_module keeps channels-last) meets tensors in torch's
        # order (`x * gamma.reshape(1, -1, 1, 1)`, a learnable scale `nn.Parameter(torch.tensor([s]))`): those
        # broadcast against the image's rank, read when it runs, and move their channels last (the runtime raises,
        # saying so, for one of more dims than the image's, whose dims torch's result would have)
        ctx.use("broadcast_channels_last")
        return [v if not v.is_tensor or v.channels_last else tensor(
            f"broadcast_channels_last({v.code}, len({leader.code}.shape))", None, "channels_last").but(
            layout="channels_last", dtype=v.dtype) for v in values], "channels_last", None
    if leader.rank is None:  # unknown rank: fall back to torch's layout for everyone
        return [to_layout(ctx, v, "source") for v in values], "source", None
    higher = [v.rank for v in tensors if v.rank is not None and v.rank > leader.rank and not v.channels_last]
    if higher:  # the image broadcasts against a tensor of more dims (`y * g.view(2, 1, c, 1, 1)`): the result has
        # those dims, in torch's order; the image's channels-last axes would pair with the wrong ones
        return [to_layout(ctx, v, "source") for v in values], "source", max(higher)
    converted = []
    for value in values:
        if not value.is_tensor or value.channels_last:
            converted.append(value.but(rank=leader.rank) if value.is_tensor and value.rank is None else value)
        elif value.rank == leader.rank:
            converted.append(to_layout(ctx, value, "channels_last"))
        else:  # lower rank or unknown: broadcast against the leader, then move channels last
            ctx.use("broadcast_channels_last")
            converted.append(tensor(f"broadcast_channels_last({value.code}, {leader.rank})", leader.rank,
                                    "channels_last"))
    return converted, "channels_last", leader.rank


def _aligned_by_unit_dims(ctx, values, permuted):
    """`values` with the permuted operands that reach the stored order of another one (of the same rank, with no
    size-1 dims known: the data) by moving size-1 dims only brought to that order (a reshape); unchanged where none
    can."""
    lead = next((v for v in permuted if not v.unit_dims and v.rank is not None), None)
    if lead is None:
        return values
    order = physical_order(lead)

    def reaches(value):
        units = set(value.unit_dims or ())
        return value.rank == lead.rank and bool(units) and value.layout != lead.layout and \
            [d for d in physical_order(value) if d not in units] == [d for d in order if d not in units]

    return [tensor(settle(v, order, ctx), v.rank).but(layout=lead.layout, dtype=v.dtype, unit_dims=v.unit_dims)
            if v.is_tensor and is_permuted(v) and reaches(v) else v for v in values]


def _only_unit_dims_moved(value):
    """Whether `value` is held out of torch's order by its size-1 dims only (`Value.unit_dims`: an unsqueezed axis
    stored where it cost nothing): brought to torch's order by a reshape."""
    if not value.unit_dims or value.rank is None or not (is_permuted(value) or value.channels_last):
        return False
    kept = [d for d in physical_order(value) if d not in value.unit_dims]
    return kept == sorted(kept)


def _settle_free_to(tensors):
    """Whether operands held out of torch's order by size-1 dims only meet, of the others, tensors in torch's order
    of their rank at least (which would otherwise move their data to the unsqueezed one's order)."""
    free = [v for v in tensors if _only_unit_dims_moved(v)]
    others = [v for v in tensors if not _only_unit_dims_moved(v)]
    return bool(free) and bool(others) and all(v.layout == "source" for v in others) and any(
        v.rank is not None and v.rank >= max(f.rank for f in free) for v in others)


def _settle_apart(tensors):
    """Whether operands of one pending transpose, each built from sizes and differing along one dim (`xx ** 2 + yy ** 2`
    of coordinate maps), settle for free one by one but not once joined: the result would differ along dims whose
    stored order the transpose changes, so each is brought to torch's order first."""
    rank = tensors[0].rank
    if rank is None or any(v.varies_along is None or v.layout != tensors[0].layout or v.rank != rank
                           for v in tensors):
        return False
    perm = [physical_order(tensors[0]).index(d) for d in range(rank)]
    whole = tensors[0].but(varies_along=tuple(sorted({d for v in tensors for d in v.varies_along})))
    return moved_without_transpose(whole, perm) is None and all(
        moved_without_transpose(v, perm) is not None for v in tensors)


def _joined_to_permuted(ctx, values, permuted):
    """Operands of one elementwise op where one layout of stored-in-place tensors (a radix axis split off an image's
    channels, held (N, H, W, R, C)) meets tensors in torch's order of the same rank (per-group weights,
    (N, R, C, 1, 1)) or of lower rank: those are broadcast and brought to the stored order (a reshape when only
    size-1 axes move) rather than the image to torch's. None when the layouts do not fit so."""
    layout, rank = permuted[0].layout, permuted[0].rank
    others = [v for v in values if v.is_tensor and v.layout != layout]
    if rank is None or any(v.layout != layout or v.rank != rank for v in permuted) or any(
            v.layout != "source" or (v.rank is not None and v.rank > rank) for v in others):
        return None
    if all(v.unit_dims for v in permuted) and any(v.rank == rank and not v.unit_dims for v in others):
        return None  # (the permuted operands broadcast, size-1 dims known: Swin's relative bias `table.permute(2, 0,
        # 1).unsqueeze(0)` meeting the batch's attention scores: the small one moves, not the scores)
    perm = physical_order(permuted[0])
    ctx.use("broadcast_in_order")
    return [tensor(f"broadcast_in_order({v.code}, {perm})", rank).but(layout=layout, dtype=v.dtype)
            if v.is_tensor and v.layout != layout else v for v in values], layout, rank


def merge_layouts(first, second):
    """The layout two control-flow paths can agree on for one variable (None: no conversion needed)."""
    if not (isinstance(first, Value) and isinstance(second, Value)):
        return None
    if not (first.is_tensor and second.is_tensor) or "raises" in (first.layout, second.layout):
        return None
    if first.channels_last == second.channels_last and not is_permuted(first) and not is_permuted(second):
        return None
    if first.layout == second.layout:
        return None
    return "source"


def element_template(value):
    """The Value every element of a list-valued `value` shares (None when unknown or mixed)."""
    if value.kind != "tuple":
        return None
    if value.items is not None:
        tensors = [i for i in value.items if i.is_tensor]
        if len(tensors) == len(value.items) and tensors and all(
                i.rank == tensors[0].rank and i.layout == tensors[0].layout for i in tensors):
            return tensors[0].with_code("")
        return None
    if isinstance(value.static, tuple) and len(value.static) == 2 and value.static[0] == "each":
        return value.static[1]
    return None


def kernel_layout(rank):
    """The layout of a torch convolution weight (O, I/g, k...) held as a channels-last convolution stores its kernel:
    (k..., I/g, O)."""
    return layout_of_order(list(range(2, rank)) + [1, 0])


def layout_of_order(order):
    """The layout name of a tensor whose physical axes hold torch dims `order`."""
    rank = len(order)
    if order == list(range(rank)):
        return "source"
    if rank > 2 and order == [0] + list(range(2, rank)) + [1]:
        return "channels_last"
    return permuted_layout(order)


def index_in_layout(order, items):
    """Basic indexing of a tensor whose physical axes hold torch dims `order`.

    `items`: one (code, drops) pair per torch dim from the first (`drops`: an integer index, which removes the dim;
    fewer items than dims: the rest are kept whole). Returns the items in physical order (the index the stored tensor
    takes) and the physical order of the result's torch dims (the layout it keeps).
    """
    items = list(items) + [(":", False)] * (len(order) - len(items))
    kept = [d for d, (_, drops) in enumerate(items) if not drops]
    return [items[d] for d in order], [kept.index(d) for d in order if d in kept]


def unsqueezed_order(order, dim):
    """The stored order after torch's `unsqueeze(dim)` of a tensor whose axes hold torch dims `order`: the new
    size-1 axis is stored just before the axis of the dim it is inserted before (appended dims go last), so no
    data moves (`x.unsqueeze(1)` of an (N, H, W, C) image is held (N, H, W, 1, C))."""
    shifted = [d + 1 if d >= dim else d for d in order]
    position = order.index(dim) if dim < len(order) else len(order)
    return shifted[:position] + [dim] + shifted[position:]


def reduced_order(order, dims):
    """The stored order after torch dims `dims` of a tensor stored in `order` are removed (a reduction without
    keepdim, a squeeze): the remaining dims renumbered, their stored order kept."""
    return [d - sum(1 for r in dims if r < d) for d in order if d not in dims]


def separable_order(order):
    """For a tensor stored in `order` whose ops act per spatial axis (pools): the stored order with the channel dim
    moved last and the batch first ([0, spatial dims in their stored order..., 1]), or None for other orders."""
    if not order or 0 not in order or 1 not in order:
        return None
    return [0] + [d for d in order if d > 1] + [1]


class OuterNamesHoister:
    """The hoister inside a comprehension or a lambda: a conversion of a name it does not bind (`own`) goes before
    the statement (`outer`'s hoister), one of its own names is converted where it is read (`hoist` answers None)."""

    def __init__(self, outer, own):
        self.outer, self.own = outer, own

    def hoist(self, name, code, layout):
        return None if name in self.own else self.outer.hoist(name, code, layout)
