"""Rules: tensor functions and methods (shape ops, reductions, elementwise math, creation, casts).

Most run in torch's axis order through porter/runtime/tensor_ops.py. Layout-aware ones (cat, reductions,
permute/transpose, flatten of spatial dims, elementwise math) keep channels-last tensors channels-last by
remapping their axis arguments, so convnets pay for no transposes between blocks.
"""

import ast
import re
from dataclasses import replace

from porter.ir.layout import (broadcast_in_order_code, element_template, layout_of_order, reduced_order, settle,
                              unsqueezed_order)
from porter.ir.values import (NARROW_INTS, EinsumRecipe, Value, is_permuted, permuted_layout, physical_order, python,
                               reads_through, remap_axis, tensor, written_channels)
from porter.rules.kernel_rows import (OutputRows, output_rows_of_kernel, reduced_rows, rows_of_kernel,
                                      translate_reshape_as)
from porter.rules.registry import Signature, function_rule, pointwise_rule
from porter.rules.view_categories import categorised_orders

FLOAT_DTYPES = frozenset({"tf.float16", "tf.bfloat16", "tf.float32", "tf.float64"})


def _bind(ctx, call, signature_text):
    return call.bind(Signature.parse(signature_text))


def _static_int(value):
    return value.static if value is not None and isinstance(value.static, int) and not isinstance(
        value.static, bool) else None


def _runtime(ctx, name):
    return ctx.runtime(name)


def _plain_call(ctx, runtime, call, layout="source", rank=None):
    args = [ctx.plain(v) for v in call.all_args()]
    kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items()}
    return tensor(f"{_runtime(ctx, runtime)}({ctx.join_args(args, kwargs)})", rank, layout)


# --- shape ops --------------------------------------------------------------------------------------------
def flatten_channels_last(ctx, value):
    """Flatten a channels-last tensor as it lies, (H, W, C): no transpose; the consumer must know the order."""
    code = f"{_runtime(ctx, 'flatten')}({value.code}, 1)"
    return tensor(code, 2, "flat_channels_last").but(channels=value.channels)


def _flattens_everything(sizes):
    """view(B, -1) / view(-1, N): every non-batch dim merged into one."""
    return len(sizes) == 2 and all(v.kind != "starred" for v in sizes) and any(v.static == -1 for v in sizes)


def translate_view(ctx, call):
    """view/reshape run in torch's order: channels-last input goes back first (one transpose, or a reshape). The rows
    of a convolution kernel (`w.reshape(1, O, -1)`) say so (KernelRows: weight standardisation reads them)."""
    result = _translated_view(ctx, call)
    rows = rows_of_kernel(call.all_args()[0], call.all_args()[1:], result) if not call.kwargs else None
    if rows is None and not call.kwargs:
        rows = output_rows_of_kernel(call.all_args()[0], call.all_args()[1:], result)
    return result.but(static=rows) if rows is not None and result.is_tensor else result


def _translated_view(ctx, call):
    value = call.all_args()[0]
    raw_sizes = call.all_args()[1:]
    own_sizes = (f"list(torch_size({value.code}))", f"list(torch_size({value.code}, channels_last=True))")
    if len(raw_sizes) == 1 and value.is_tensor and not call.kwargs and (
            raw_sizes[0].kind == "size" and raw_sizes[0].code == value.code or raw_sizes[0].code in own_sizes):
        return value  # `q.view(list(q.size()))`, `x.reshape(x.shape)` (QANet's helpers): the tensor as it is held
    image = _flat_image_view(ctx, value, raw_sizes, call.kwargs)
    if image is not None:
        return image
    if value.channels_last and written_channels(value) and _flattens_everything(raw_sizes):
        size_codes = [ctx.plain(v).code for v in raw_sizes]
        code = f"{_runtime(ctx, 'view')}({value.code}, {', '.join(size_codes)})"
        return tensor(code, 2, "flat_channels_last").but(channels=value.channels)
    kept = _view_keeping_layout(ctx, value, raw_sizes + list(call.kwargs.values()))
    if kept is not None:
        return kept
    folded = _folded_image(ctx, value, raw_sizes, call.kwargs)
    if folded is not None:
        return folded
    source = ctx.plain(call.all_args()[0])
    sizes = [ctx.plain(v) for v in call.all_args()[1:]] + [ctx.plain(v) for v in call.kwargs.values()]
    # (a starred size of known length counts its items: `qkv.view(*new_qkv_shape)` of `x.size()[:-1] + (h, 3 * d)`)
    written = call.all_args()[1:] + list(call.kwargs.values())
    rank = sum(len(v.items) if v.kind == "starred" else 1 for v in written) if written and all(
        v.kind != "starred" or v.items is not None for v in written) else None
    if len(sizes) == 1 and sizes[0].kind != "starred":
        static, shape = sizes[0].static, written[0] if len(written) == 1 else sizes[0]
        rank = len(static) if isinstance(static, (tuple, list)) else (1 if isinstance(static, int) else None)
        if rank is None and shape.kind == "tuple" and shape.items is not None and all(
                i.kind != "starred" for i in shape.items):  # `x.view(x.size()[:-2] + (d,))`: one dim a size
            rank = len(shape.items)
    code = f"{_runtime(ctx, 'view')}({ctx.join_args([source] + sizes, {})})"
    units = tuple(dim for dim, size in enumerate(written) if size.static == 1) if rank == len(written) else ()
    return tensor(code, rank).but(unit_dims=units or None)  # (`std.view(-1, 1, 1, 1)`: size-1 dims written)


def _view_keeping_layout(ctx, value, raw_sizes):
    """A view of a channels-last or permuted tensor that leaves it in a channels-last-like order: the channel dim
    split into groups, groups merged back (a channel shuffle), spatial dims merged, or the channels kept whole where
    a size read as a channel count is given (`x.view(nt // s, s, c, h, w)`). The runtime checks at trace time that
    the sizes group as expected (else it transposes), so the guess costs speed, never correctness."""
    if len(raw_sizes) == 1 and raw_sizes[0].kind == "tuple" and raw_sizes[0].items is not None:
        raw_sizes = list(raw_sizes[0].items)
    elif len(raw_sizes) == 1 and raw_sizes[0].kind == "python":
        raw_sizes = _written_sizes(raw_sizes[0]) or raw_sizes
    written = raw_sizes
    raw_sizes = [item for v in raw_sizes for item in (v.items if v.kind == "starred" and v.items else [v])]
    if not value.is_tensor or value.rank is None or value.rank < 3 or any(
            v.kind == "starred" or v.kind == "tuple" for v in raw_sizes):
        return None
    channels = [i for i, size in enumerate(raw_sizes) if size.channel_count]  # `c` of `nt, c, h, w = x.shape`
    if not channels and value.channels_last and len(raw_sizes) > value.rank and not raw_sizes[1].spatial_size and \
            all(v.spatial_size for v in raw_sizes[2:]):
        channels = [1]  # `y.view(b, c, *x.size()[2:])` of a (N, C, H*W) held channels-last: the spatial dim split
    if not channels and value.channels_last and len(raw_sizes) == value.rank and raw_sizes[1].static == -1 and \
            all(v.spatial_size for v in raw_sizes[2:]):
        channels = [1]  # EfficientViT-MSRA's `feat.view(B, -1, H, W)` of an image of those sizes: its channels
    if value.channels_last and len(raw_sizes) < value.rank and not channels and raw_sizes[-1].static != -1 and \
            not raw_sizes[-1].spatial_size and not (len(raw_sizes) == 3 and raw_sizes[1].static == -1):
        return None  # nothing says the channels stay whole and the spatial dims merge ((N, C, H*W) is written with
        # a -1, the channel count read off the image, or a size made of its spatial sizes, such as torchvision
        # ViT's `n_h * n_w` of `n_h = h // p`): (N, R*C, 1, 1) viewed (N, R, self.channels) reads as well (SKNet's
        # branch weights after a global pool), and in torch's order it costs a reshape where the guess costs a
        # transpose. (N, -1, S) leaves the channel count to be read off the image: the channels stay whole
    headed = _heads_to_image(ctx, value, raw_sizes, written)
    if headed is not None:
        return headed
    orders = view_orders_keeping_layout(value, len(raw_sizes), channels[0] if len(channels) == 1 else None)
    if orders is None and not channels and value.channels_last and len(raw_sizes) == value.rank and \
            raw_sizes[-1].static == -1 and _written_quotient(raw_sizes[2]) and not value.unit_dims:
        # (N, C, H, W) viewed as (N, heads, C // heads, -1): the channels split into heads, the spatial dims merged
        # (BoTNet's and the LambdaNet's heads of a conv output): held (N, H*W, heads, C // heads)
        count = len(raw_sizes)
        orders = physical_order(value), [0] + list(range(3, count)) + [1, 2]
    if orders is not None and is_permuted(value) and len(raw_sizes) < value.rank and not channels and \
            any(_written_product(v) for v in raw_sizes) and not _written_product(raw_sizes[1]):
        orders = None  # (channel groups merge into dim 1, but the sizes write the product elsewhere)
    if orders is None:
        orders = categorised_orders(value, raw_sizes)
    if orders is None and is_permuted(value) and len(raw_sizes) == value.rank - 1 and \
            not isinstance(value.static, EinsumRecipe):  # (an einsum is written in torch's order for free)
        orders = _merged_pair_orders(physical_order(value), raw_sizes)
    if orders is None:
        return None
    order, out_order = orders
    sizes = [ctx.plain(v).code for v in written]
    code = f"{_runtime(ctx, 'view_in_layout')}({value.code}, {order}, {out_order}, {', '.join(sizes)})"
    units = tuple(i for i, size in enumerate(raw_sizes) if size.static == 1)  # (written 1s: size-1 dims)
    return layout_kept_result(code, out_order).but(unit_dims=units or None)


def _heads_to_image(ctx, value, raw_sizes, written):
    """An attention einsum's (N, heads, d, L) result, written in place, viewed as the image (N, C, H, W) (BoTNet's
    `torch.matmul(v, attn.permute(0, 1, 3, 2)).view(b, C, h, w)`): the einsum written to give (N, L, heads, d),
    whose view is the image channels-last (the runtime checks at trace time that the sizes group so); None
    otherwise."""
    recipe = value.static if isinstance(value.static, EinsumRecipe) else None
    if recipe is None or value.code != recipe.code() or value.rank != 4 or len(raw_sizes) != 4 or \
            not raw_sizes[1].channel_count or not all(v.spatial_size for v in raw_sizes[2:]):
        return None
    held = [0, 3, 1, 2]
    code = settle(value, held)  # (the einsum written again in that order)
    sizes = [ctx.plain(v).code for v in written]
    return tensor(f"{_runtime(ctx, 'view_in_layout')}({code}, {held}, {[0, 2, 3, 1]}, {', '.join(sizes)})", 4,
                  "channels_last")


def _merged_pair_orders(order, sizes=()):
    """(order, out_order) for a view of a permuted tensor stored in `order` to one dim fewer, when exactly one pair of
    adjacent torch dims is stored side by side in torch's order (LLaMA's `repeat_kv`: heads and their copies,
    `[:, :, None]` then expanded, merged while the sequence is stored before them): that pair merges and the result
    keeps the rest of the order; None otherwise, or when the written `sizes` say another pair merges (a product
    written elsewhere, `x.permute(0, 3, 1, 2).reshape(b, t, c * f)` of a spectrogram's feature map: the plain view
    moves the data once, in torch's order, for the GRU after it). The runtime checks at trace time that the sizes
    pair up so (else it transposes)."""
    pairs = [d for d in range(len(order) - 1) if order.index(d) + 1 == order.index(d + 1)]
    if len(pairs) != 1:
        return None
    merged = pairs[0]
    products = [i for i, size in enumerate(sizes) if _written_product(size)]
    if products and merged not in products:
        return None
    out_order = [d if d <= merged else d - 1 for d in order if d != merged + 1]
    return order, out_order


def _written_quotient(size):
    """Whether a written size is a floor division (`C // self.heads`: a channel count split)."""
    try:
        node = ast.parse(size.code, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv)


def _written_product(size):
    """Whether a written size is a product (`c * f`) or left to torch (-1): where merged dims land."""
    if size.static == -1:
        return True
    try:
        node = ast.parse(size.code, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)


def _flat_image_view(ctx, value, raw_sizes, kwargs):
    """A Linear's output whose weight rows load permuted (`flat_channels_last`: the image (H, W, C) flattened,
    passes/image_views.py) viewed as an image of that channel count, `view(-1, C, H, W)`: split as it lies, the
    image channels-last; None otherwise (it goes back to torch's order first)."""
    if kwargs or not value.is_tensor or value.layout != "flat_channels_last":
        return None
    if len(raw_sizes) == 1 and raw_sizes[0].kind == "tuple" and raw_sizes[0].items is not None:
        raw_sizes = list(raw_sizes[0].items)
    elif len(raw_sizes) == 1 and raw_sizes[0].kind == "python":
        raw_sizes = _written_sizes(raw_sizes[0]) or raw_sizes
    if len(raw_sizes) not in (4, 5) or any(v.kind in ("starred", "tuple") for v in raw_sizes):
        return None
    codes = [ctx.plain(v).code for v in raw_sizes]
    if codes[1] != value.channels:
        return None
    code = f"{_runtime(ctx, 'view')}({value.code}, {', '.join([codes[0], *codes[2:], codes[1]])})"
    return tensor(code, len(codes), "channels_last").but(channels=value.channels, dtype=value.dtype)


def _folded_image(ctx, value, raw_sizes, kwargs):
    """A permuted tensor of more dims viewed as an image (MobileViT folding its patches back: `x.reshape(b, ph, pw,
    h, w, d).permute(0, 5, 3, 1, 4, 2).reshape(b, d, H, W)`): the image made channels-last straight from the stored
    tensor (the runtime transposes once when the merged dims allow it, else as torch's order does); None otherwise."""
    count = len(raw_sizes)
    if kwargs or not is_permuted(value) or value.rank is None or count not in (4, 5) or value.rank <= count or any(
            v.kind in ("starred", "tuple") for v in raw_sizes) or not raw_sizes[1].channel_count or not all(
            v.spatial_size for v in raw_sizes[2:]):
        return None  # (an image: its channel count, then its spatial sizes, as read off an image; not tokens)
    out_order = [0] + list(range(2, count)) + [1]
    sizes = ", ".join(ctx.plain(v).code for v in raw_sizes)
    code = f"{_runtime(ctx, 'view_in_layout')}({value.code}, {physical_order(value)}, {out_order}, {sizes})"
    return tensor(code, count, "channels_last")


def _written_sizes(value):
    """The entries of a shape written out as a tuple or list (`x.reshape((B, self.radix, RC // self.radix, H, W))`)
    as Values, or None (a starred entry, or not written out)."""
    try:
        written = ast.parse(value.code, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(written, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in written.elts):
        return None
    return [python(ast.unparse(e), static=e.value if isinstance(e, ast.Constant) else None) for e in written.elts]


def layout_kept_result(code, out_order):
    """The tensor Value of a view that `view_orders_keeping_layout` planned: channels-last, or a permuted layout."""
    count = len(out_order)
    if out_order == [0] + list(range(2, count)) + [1]:
        return tensor(code, count, "channels_last")
    return tensor(code, count).but(layout=permuted_layout(out_order))


def view_orders_keeping_layout(value, count, channel_out=None):
    """(the stored order of `value`'s torch dims, the stored order of the result's) for a view of tensor `value` to
    `count` dims that keeps a channels-last-like order, or None (then the view runs in torch's order).

    `channel_out`: the result's dim that the dim `value` stores last (its channels) becomes, when the source says so
    (a Gluon reshape's 0 copying it, a torch view given the size read from it: `c` of `n, c, t, h, w = x.shape` in
    `x.transpose(1, 2).reshape(n * t, c, h, w)`); the view then only merges, splits, inserts or drops the other
    dims (a video net folding its time axis into the batch around a 2D stage). Without it, or when the channels are
    stored behind dims out of torch's order (the groups of a channel shuffle), the channel-group plans below."""
    if not value.is_tensor or value.rank is None or value.rank < 3:
        return None
    order, rank = physical_order(value), value.rank
    if count < 3 or order == list(range(rank)):
        return None
    kept = _channel_kept_orders(order, count, channel_out) if channel_out is not None else None
    return kept if kept is not None else _channel_groups_orders(value, order, count)


def _channel_kept_orders(order, count, channel_out):
    """(order, out_order) for a view that keeps the dim stored last (the channels) whole as the result's dim
    `channel_out` and only merges, splits, inserts or drops the dims stored before it, which are stored in torch's
    order: the result is stored the same way ((N, T, H, W, C) viewed as (N*T, C, H, W) is held (N*T, H, W, C)).
    None for other storages. The runtime checks at trace time that the sizes pair up so (else it transposes)."""
    if order[:-1] != sorted(order[:-1]) or not 0 < channel_out < count:
        return None
    return order, [d for d in range(count) if d != channel_out] + [channel_out]


def _channel_groups_orders(value, order, count):
    """(order, out_order) for a view that splits the channels of a channels-last tensor into groups, merges its
    spatial dims, or regroups split channel groups back (a channel shuffle), or None."""
    rank = value.rank
    if value.channels_last and count > rank:  # (N, C, H, W) -> (N, g, C/g, H, W): held (N, H, W, g, C/g)
        groups = count - rank + 1
        out_order = [0] + list(range(groups + 1, count)) + list(range(1, groups + 1))
    elif value.channels_last and count < rank:  # (N, C, H, W) -> (N, C, H*W): held (N, H*W, C)
        out_order = [0] + list(range(2, count)) + [1]
    else:  # (N, g, C/g, H, W) held (N, H, W, [the groups in any order]) -> (N, C, H, W) held channels-last
        merged = rank - count + 1
        tail = order[rank - merged:]
        if count >= rank or sorted(tail) != list(range(1, merged + 1)) or \
                order[:rank - merged] != [0] + list(range(merged + 1, rank)):
            return _channel_groups_regrouped(order, count)
        out_order = [0] + list(range(2, count)) + [1]
    return order, out_order


def _channel_groups_regrouped(order, count):
    """(order, out_order) for a view that regroups the channel group dims 1..k of a tensor held (N, *spatial, *those
    k dims in order) into count - 1 - len(spatial) new group dims, the spatial dims kept: (N, 1, R*C, H, W)
    held (N, H, W, 1, R*C) viewed as (N, R, C, H, W) is held (N, H, W, R, C). None for any other view."""
    rank = len(order)
    for groups in range(2, rank):  # one channel dim: the views above (spatial sizes unknown to be kept)
        spatial = rank - 1 - groups
        if order == [0] + list(range(groups + 1, rank)) + list(range(1, groups + 1)):
            new_groups = count - 1 - spatial
            if new_groups < 1 or (new_groups == 1 and spatial == 0):
                return None
            return order, [0] + list(range(new_groups + 1, count)) + list(range(1, new_groups + 1))
    return None


def translate_flatten(ctx, call):
    bound = _bind(ctx, call, "(input, start_dim=0, end_dim=-1)")
    source = bound["input"]
    default_start = 1 if call.canonical == "torch.nn.functional.flatten" else 0
    start = _static_int(bound.get("start_dim")) if "start_dim" in bound else default_start
    end = _static_int(bound.get("end_dim")) if "end_dim" in bound else -1
    if source.channels_last and written_channels(source) and start is not None and end is not None and \
            start % (source.rank or 4) == 1 and end % (source.rank or 4) == (source.rank or 4) - 1:
        return flatten_channels_last(ctx, source)
    if source.channels_last and source.rank is not None and start is not None and end is not None:
        rank = source.rank
        start_n, end_n = start % rank, end % rank
        if start_n >= 2 and end_n == rank - 1 and end_n > start_n:
            # only spatial dims merge: the channels-last tensor flattens its middle axes, layout kept
            merged_rank = rank - (end_n - start_n)
            code = f"{_runtime(ctx, 'flatten')}({source.code}, {start_n - 1}, {rank - 2})"
            return tensor(code, merged_rank, "channels_last")
    merged = _flatten_in_layout(ctx, source, start, end)
    if merged is not None:
        return merged
    plain = ctx.plain(source)
    rank = None
    if plain.rank is not None and start is not None and end is not None:
        rank = plain.rank - ((end % plain.rank) - (start % plain.rank)) if plain.rank else 1
    args = [plain]
    if "start_dim" in bound or default_start:
        args.append(python(str(start if start is not None else bound["start_dim"].code)))
    if "end_dim" in bound:
        args.append(ctx.plain(bound["end_dim"]))
    return tensor(f"{_runtime(ctx, 'flatten')}({ctx.join_args(args, {})})", rank)


def _flatten_in_layout(ctx, source, start, end):
    """flatten(start, end) of a tensor held in another order whose merged dims lie side by side where it is stored
    (a channel shuffle's `x.permute(0, 2, 1, 3, 4).flatten(1, 2)` of an image held (N, H, W, G, C/G)): those axes
    merge where they lie (a gather puts them in torch's order when they are stored in another, never a transpose
    of the tensor); None for any other flatten."""
    if not source.is_tensor or source.rank is None or start is None or end is None or not (
            is_permuted(source) or source.channels_last):
        return None
    rank, order = source.rank, physical_order(source)
    start, end = start % rank, end % rank
    if end <= start:
        return None
    positions = [order.index(d) for d in range(start, end + 1)]
    if max(positions) - min(positions) != end - start:
        return None
    new_order = [d if d < start else start if d <= end else d - (end - start) for d in order]
    new_order = list(dict.fromkeys(new_order))
    if positions == sorted(positions):
        code = f"{_runtime(ctx, 'flatten')}({source.code}, {positions[0]}, {positions[-1]})"
    elif is_permuted(source):
        code = f"{_runtime(ctx, 'flatten_in_layout')}({source.code}, {positions})"
    else:  # (an image's channels and spatial dims: flattened in torch's order, the Linear after it reads that)
        return None
    return tensor(code, len(new_order), layout_of_order(new_order)).but(dtype=source.dtype)


def _permuted(ctx, value, dims):
    """Result of torch's permute(dims) on `value`: a relabelling, no data moved.

    The data stays where it is and the value's layout records the new physical order; the consumer that needs
    a real order (a reshape, a layer) pays one transpose then, or none at all when the data is already in
    that order, or the producer was an einsum that can write its output in the wanted order.
    """
    rank = value.rank
    order = physical_order(value)
    # physical axis k holds old torch dim order[k], which is new dim dims.index(order[k])
    physical_new = [dims.index(old) for old in order]
    channels_last = [0] + list(range(2, rank)) + [1]
    if physical_new == list(range(rank)):
        return tensor(value.code, rank, "source")
    if rank > 2 and physical_new == channels_last:
        return tensor(value.code, rank, "channels_last")
    if value.unit_dims and _moves_only_unit_dims(dims, value.unit_dims) and not is_permuted(value) and \
            not value.channels_last:
        # a permute moving only dims of size 1 (a one-layer GRU's `hidden.permute(1, 0, 2)`, (1, N, H)): settled
        # now, a reshape where the runtime sees those sizes (left pending, an operand in torch's order it met would
        # be transposed to it instead)
        code = f"{_runtime(ctx, 'permute_axes')}({value.code}, {list(dims)})"
        return tensor(code, rank, "source").but(dtype=value.dtype, unit_dims=tuple(
            new for new, old in enumerate(dims) if old in value.unit_dims))
    return value.but(layout=permuted_layout(physical_new))


def _moves_only_unit_dims(dims, unit_dims):
    """Whether torch's `permute(dims)` keeps the dims not in `unit_dims` in their order."""
    kept = [d for d in dims if d not in unit_dims]
    return kept == sorted(kept)


def translate_permute(ctx, call):
    args = call.all_args()
    value = args[0]
    dims_values = args[1:] if len(args) > 2 or (len(args) == 2 and isinstance(args[1].static, int)) else None
    if dims_values is None and len(args) == 2:
        dims = args[1].static
    elif "dims" in call.kwargs:
        dims = call.kwargs["dims"].static
    else:
        dims = [v.static for v in dims_values] if dims_values else None
    if value.rank is None and value.is_tensor and dims is not None and len(dims) > 2 and \
            all(isinstance(d, int) for d in dims):
        value = value.but(rank=len(dims))  # torch's permute names every dim: the rank is len(dims)
    if value.rank is None or dims is None or not all(isinstance(d, int) for d in dims) or len(dims) != value.rank:
        return _plain_call(ctx, "permute", call)
    dims = [d % value.rank for d in dims]
    return _permuted(ctx, value, dims)


def translate_transpose(ctx, call):
    bound = _bind(ctx, call, "(input, dim0, dim1)")
    value = bound["input"]
    dim0, dim1 = _static_int(bound.get("dim0")), _static_int(bound.get("dim1"))
    if value.rank is None and value.channels_last and dim0 is not None and dim1 is not None and len(call.all_args()) == 3:
        # an image or sequence held channels-last whose rank the runtime reads: one permutation there, or none
        return tensor(f"{_runtime(ctx, 'transpose')}({value.code}, {dim0}, {dim1}, channels_last=True)")
    if value.rank is None or dim0 is None or dim1 is None:
        return _plain_call(ctx, "transpose", call, rank=value.rank)
    dims = list(range(value.rank))
    dims[dim0 % value.rank], dims[dim1 % value.rank] = dims[dim1 % value.rank], dims[dim0 % value.rank]
    return _permuted(ctx, value, dims)


def translate_unflatten(ctx, call):
    """`x.unflatten(dim, sizes)`: the dim split where it is stored, whatever the layout (`x.unflatten(1, (g, -1))` of
    an image held channels-last is held (N, H, W, g, C/g), a channel shuffle's groups; no data moves)."""
    bound = _bind(ctx, call, "(input, dim, sizes)")
    value, dim, sizes = bound["input"], _static_int(bound.get("dim")), bound.get("sizes")
    count = None
    if sizes is not None and sizes.kind == "tuple" and sizes.items is not None:
        count = len(sizes.items) if all(i.kind != "starred" for i in sizes.items) else None
    elif sizes is not None and isinstance(sizes.static, (tuple, list)):
        count = len(sizes.static)
    elif sizes is not None and sizes.kind == "python":  # `(g, -1)` written out
        count = len(_written_sizes(sizes) or ()) or None
    if not value.is_tensor or value.rank is None or dim is None or not count or call.kwargs.keys() - {"sizes"} or \
            not (value.layout == "source" or value.channels_last or is_permuted(value)):  # (a flat (H*W*C) one: plain)
        return _plain_call(ctx, "unflatten", call,
                           rank=None if value.rank is None or not count else value.rank + count - 1)
    dim = dim % value.rank
    order = physical_order(value)
    new_order = [n for d in order for n in ((d,) if d < dim else range(dim, dim + count) if d == dim else
                                            (d + count - 1,))]
    code = f"{_runtime(ctx, 'unflatten')}({value.code}, {order.index(dim)}, {ctx.plain(sizes).code})"
    return tensor(code, len(new_order), layout_of_order(new_order)).but(dtype=value.dtype)


def translate_t(ctx, call):
    value = ctx.plain(call.all_args()[0])
    return tensor(f"{_runtime(ctx, 'matrix_t')}({value.code})", value.rank)


def _rank_change(delta):
    def translate(ctx, call):
        args = call.all_args()
        kept = _rank_change_in_layout(ctx, call, delta)
        if kept is not None:
            return kept
        result = _plain_call(ctx, runtime_names[call.canonical.rsplit(".", 1)[1]], call)
        rank = args[0].rank + delta if args[0].rank is not None else None
        if delta < 0 and (len(args) < 2 and not call.kwargs):
            rank = None  # squeeze() without dim: depends on sizes
        dim = _static_int(_bind(ctx, call, "(input, dim)").get("dim")) if delta > 0 else None
        if dim is not None and rank is not None and -rank <= dim < rank and args[0].is_tensor:
            # the new dim has size 1 (Informer's `k_sample.unsqueeze(-3)`, which a matmul then broadcasts)
            dim %= rank
            units = tuple(sorted({*(d + 1 if d >= dim else d for d in args[0].unit_dims or ()), dim}))
            return result.but(rank=rank, unit_dims=units)
        return result.but(rank=rank)

    return translate


runtime_names = {"squeeze": "squeeze", "unsqueeze": "unsqueeze"}


def _rank_change_in_layout(ctx, call, delta):
    """unsqueeze/squeeze of a literal dim on a channels-last (unsqueeze) or permuted tensor: the size-1 axis is
    added or removed where the data lies (`x.pow(2).unsqueeze(1)` of an image is held (N, H, W, 1, C), a later
    `.squeeze(1)` gives the image back channels-last), no data moved. The layout of a squeeze assumes the dim has
    size 1, as the rank torch's order gives it does; the runtime's tf.squeeze refuses any other size."""
    bound = _bind(ctx, call, "(input, dim)")
    value, dim = bound.get("input"), _static_int(bound.get("dim"))
    if delta > 0 and dim == 1 and value is not None and value.is_tensor and value.rank == 3 and \
            value.layout == "source" and value.dtype in (None, *FLOAT_DTYPES) and len(call.kwargs) <= 1:
        # a map (N, H, W) given a channel axis (CBAM's `x.max(1)[0].unsqueeze(1)`): its size-1 channel is stored
        # last at no cost, so the (N, 1, H, W) image is held channels-last, as the convolutions after it take it
        return tensor(f"tf.expand_dims({value.code}, -1)", 4, "channels_last").but(unit_dims=(1,))
    if value is None or dim is None or not value.is_tensor or value.rank is None or len(call.kwargs) > 1 or not (
            is_permuted(value) or value.channels_last):
        return None
    order, rank = physical_order(value), value.rank
    if delta > 0:
        dim = dim + rank + 1 if dim < 0 else dim
        if not 0 <= dim <= rank:
            return None
        out_order = unsqueezed_order(order, dim)
        code = f"tf.expand_dims({value.code}, {out_order.index(dim)})"
        units = (*(d + 1 if d >= dim else d for d in value.unit_dims or ()), dim)  # (the new one has size 1)
    else:
        dim = dim + rank if dim < 0 else dim
        if not 0 <= dim < rank:
            return None
        out_order = reduced_order(order, [dim])
        code = f"tf.squeeze({value.code}, {order.index(dim)})"
        units = tuple(d - 1 if d > dim else d for d in value.unit_dims or () if d != dim)
    return tensor(code, len(out_order)).but(layout=layout_of_order(out_order), dtype=value.dtype,
                                            rank=len(out_order), unit_dims=tuple(sorted(units)) or None)


def translate_cat(ctx, call):
    """cat along a dim: channels-last inputs stay channels-last (U-Net skips), dim remapped."""
    bound = _bind(ctx, call, "(tensors, dim=0)")
    if "axis" in call.kwargs:
        bound["dim"] = call.kwargs["axis"]
    tensors = bound["tensors"]
    dim_value = bound.get("dim", python("0", static=0))
    dim = _static_int(dim_value)
    # items without code are the element templates of a call's result (`x.chunk(2)`), not expressions to list
    items = tensors.items if tensors.kind == "tuple" and tensors.items is not None and all(
        item.code for item in tensors.items) else None
    if items is not None:  # (what it joins is tensors: an untyped one, `f["x"]` of a dict a block returned, lies in
        # torch's order, as every value porter cannot type does)
        items = tuple(tensor(item.code) if item.kind == "python" else item for item in items)
    template = element_template(tensors)
    is_stack = call.canonical.rsplit(".", 1)[1] not in ("cat", "concat", "concatenate")
    runtime = _runtime(ctx, "stack" if is_stack else "cat")
    stacked = _stack_in_layout(runtime, tensors, items, template, dim) if is_stack else None
    if stacked is not None:
        return stacked
    if items is None and template is not None and template.channels_last and dim is not None and not is_stack and \
            (template.rank or dim == 1):  # (of unknown rank: along the channel dim, the last axis at any rank)
        axis = remap_axis(dim, template.rank) if template.rank else -1
        return tensor(f"{runtime}({tensors.code}, {axis})", template.rank, "channels_last")
    if items is None or dim is None:
        plain = ctx.plain(tensors)
        rank = template.rank if template is not None and template.layout == "source" else None
        if rank is not None and is_stack:
            rank += 1
        return tensor(f"{runtime}({plain.code}, {ctx.plain(dim_value).code})", rank)
    if not is_stack and len({v.layout for v in items}) == 1 and is_permuted(items[0]) and items[0].rank and all(
            v.is_tensor and v.rank == items[0].rank for v in items):
        # pieces of one pending permute (rotary embedding's `torch.cat((-x2, x1), dim=-1)` of heads held (B, T, H,
        # D)): joined along the axis that holds `dim`, the result held as they are
        order = physical_order(items[0])
        listed = tensors.code if tensors.code.isidentifier() or reads_through(tensors) else \
            f"[{', '.join(v.code for v in items)}]"
        return tensor(f"{runtime}({listed}, {order.index(dim % items[0].rank)})", items[0].rank,
                      items[0].layout).but(dtype=items[0].dtype)
    joined = _joined_to_pending(ctx, runtime, items, dim) if not is_stack else None
    if joined is not None:
        return joined
    if not is_stack and _one_channel_maps(items, dim):
        # maps of one channel each in torch's layout (Tacotron2's location features: `torch.cat((w.unsqueeze(1),
        # cum.unsqueeze(1)), dim=1)`, then a Conv1d): each is channels-last by a reshape, so they join on the last
        # axis for the convolution they feed, not into a torch-layout map it would transpose
        moved = [f"{ctx.runtime('to_channels_last')}({v.code})" for v in items]  # (one channel: a reshape)
        return tensor(f"{runtime}([{', '.join(moved)}], -1)", items[0].rank, "channels_last")
    # images channels-last of unknown rank (results of layers porter could not type) join along the channel dim,
    # the last axis at any rank (a rank-2 tensor lies as torch's does); another dim needs their rank
    unified, layout, rank = ctx.unify(list(items), unknown_rank=dim == 1 and not is_stack)
    if layout == "channels_last" and not is_stack:
        axis = remap_axis(dim, rank) if rank is not None else -1
        unchanged = [v.code for v in unified] == [v.code for v in items] and (
            tensors.code.isidentifier() or reads_through(tensors))
        listed = tensors.code if unchanged else f"[{', '.join(v.code for v in unified)}]"  # `cat(inputs, 3)`
        return tensor(f"{runtime}({listed}, {axis})", rank, "channels_last")
    plain = [ctx.plain(v) for v in items]
    ranks = {v.rank for v in plain}
    rank = next(iter(ranks)) if len(ranks) == 1 else None
    if is_stack and rank is not None:
        rank += 1
    listed = ctx.plain(tensors).code if reads_through(tensors) else f"[{', '.join(v.code for v in plain)}]"
    return tensor(f"{runtime}({listed}, {dim_value.code})", rank)


def _joined_to_pending(ctx, runtime, items, dim):
    """cat of one pending permute with tensors in torch's order (HF GPT-2's `torch.cat((past_key, key), dim=-2)` of
    heads held (B, T, H, D) under `if layer_past is not None:`): the others permuted to the order it is held in, the
    result held so, where settling the permute would move it; None for anything else."""
    pending = [v for v in items if v.is_tensor and is_permuted(v)]
    if len(pending) != 1 or not pending[0].rank or dim is None:
        return None
    rank, order = pending[0].rank, physical_order(pending[0])
    others = [v for v in items if v is not pending[0]]
    if not all(v.is_tensor and v.layout == "source" and v.rank in (None, rank) or
               v.kind == "python" and v.static is None and not v.code.startswith("*") for v in others):
        return None
    listed = [v.code if v is pending[0] else _moved_to(ctx, v, order) for v in items]
    return tensor(f"{runtime}([{', '.join(listed)}], {order.index(dim % rank)})", rank, pending[0].layout).but(
        dtype=pending[0].dtype)


def _moved_to(ctx, value, order):
    """The code of tensor `value` (torch's order) laid out in `order`: its copies broadcast again in that order when
    it is a repeat or an expand (seq2seq attention's `hidden.unsqueeze(1).repeat(1, src_len, 1)`: no data moved),
    else a transpose."""
    broadcast = broadcast_in_order_code(ctx.runtime, value, order) if value.is_tensor else None
    return broadcast or f"{_runtime(ctx, 'permute_axes')}({value.code}, {order})"


def _one_channel_maps(items, dim):
    """Whether `items`, joined along torch's dim `dim`, are tensors of one rank > 2 in torch's layout, each constant
    along dim 1 (an `unsqueeze(1)`: one channel; an `expand([n, 1, -1, -1])`: a size-1 dim) and joined along it."""
    rank = items[0].rank if items and items[0].is_tensor else None
    return rank is not None and rank > 2 and dim is not None and dim % rank == 1 and all(
        v.is_tensor and v.layout == "source" and v.rank == rank and (
            v.varies_along is not None and 1 not in v.varies_along or 1 in (v.unit_dims or ())) for v in items)


def _stack_in_layout(runtime, tensors, items, template, dim):
    """stack along a literal dim of images all held channels-last (WaveNet's skips): the new axis is stored where
    it goes without moving their data (`stack(skips, 0)` of (N, L, C) images is held (S, N, L, C)), the result
    permuted; None for anything else."""
    held = [template] if items is None else list(items)
    if dim is None or not held or any(v is None or not v.is_tensor or not v.channels_last or not v.rank or
                                      v.rank != held[0].rank for v in held):
        return None
    rank = held[0].rank
    dim = dim + rank + 1 if dim < 0 else dim
    if not 0 <= dim <= rank:
        return None
    out_order = unsqueezed_order(physical_order(held[0]), dim)
    listed = tensors.code if items is None or reads_through(tensors) else f"[{', '.join(v.code for v in items)}]"
    return tensor(f"{runtime}({listed}, {out_order.index(dim)})", rank + 1, layout_of_order(out_order))


def translate_split(ctx, call):
    """split/chunk along a dim; channels-last inputs are split along the remapped axis."""
    name = call.canonical.rsplit(".", 1)[1]
    sizes = "split_size" if "split_size" in call.kwargs else "split_size_or_sections"  # (Tensor.split's keyword)
    signature = "(input, chunks, dim=0)" if name == "chunk" else f"(tensor, {sizes}, dim=0)" if \
        name == "split" else "(input, dim=0)"
    bound = _bind(ctx, call, signature)
    value = bound.get("input", bound.get("tensor"))
    dim_value = bound.get("dim", python("0", static=0))
    dim = _static_int(dim_value)
    runtime = _runtime(ctx, name if name in ("chunk", "split") else "unbind")
    middle = [v for k, v in bound.items() if k in ("chunks", "split_size_or_sections", "split_size")]
    if value.channels_last and dim is not None and (value.rank or dim == 1):
        # (of unknown rank: along the channel dim, the last axis at any rank, as cat joins them)
        axis = remap_axis(dim, value.rank) if value.rank else -1
        rank = value.rank - 1 if name == "unbind" and value.rank else value.rank
        # unbinding the channel dim leaves pieces without channels: (N, H, W) lies as torch's does
        item = tensor("", rank, "source" if name == "unbind" and dim in (1, 1 - value.rank) else "channels_last")
        args = [value] + [ctx.plain(m) for m in middle] + [python(str(axis))]
        return _pieces(f"{runtime}({ctx.join_args(args, {})})", item, bound, name)
    order = physical_order(value) if is_permuted(value) and name == "unbind" and dim is not None else None
    if order is not None:  # a pending permute (attention's `qkv.permute(2, 0, 3, 1, 4).unbind(0)`): unstacked along
        dim = dim % len(order)  # the axis that dim lies on, each piece keeps the rest of the permute pending
        rest = [d - (d > dim) for d in order if d != dim]
        item = tensor("", len(rest))
        item = item.but(layout=permuted_layout(rest)) if rest != sorted(rest) else item
        return _pieces(f"{runtime}({value.code}, {order.index(dim)})", item, bound, name)
    if is_permuted(value) and dim is not None and name in ("split", "chunk"):  # (GPT-NeoX's heads held (B, T,
        # H, 3 * D) split into q, k, v along D): along the axis holding dim, each piece keeps the permute pending
        axis = physical_order(value).index(dim % value.rank)
        args = [value] + [ctx.plain(m) for m in middle] + [python(str(axis))]
        return _pieces(f"{runtime}({ctx.join_args(args, {})})", tensor("", value.rank).but(layout=value.layout),
                       bound, name)
    plain = ctx.plain(value)
    args = [plain] + [ctx.plain(m) for m in middle] + [ctx.plain(dim_value)]
    rank = plain.rank - 1 if name == "unbind" and plain.rank else plain.rank
    return _pieces(f"{runtime}({ctx.join_args(args, {})})", tensor("", rank), bound, name)


def _pieces(code, item, bound, name):
    """The list a split returns: one template per piece when their count is static, else every piece alike."""
    items = _repeat_item(item, bound, name)
    return Value(code, "tuple", items=items, static=None if items is not None else ("each", item))


def _repeat_item(item, bound, name):
    count = bound.get("chunks")
    if name == "chunk" and count is not None and isinstance(count.static, int):
        return tuple(item for _ in range(count.static))
    sections = bound.get("split_size_or_sections")
    if name == "split" and sections is not None and isinstance(sections.static, (list, tuple)):
        return tuple(item for _ in sections.static)
    return None


# --- reductions -------------------------------------------------------------------------------------------
def _reduction(runtime, signature):
    def translate(ctx, call):
        bound = _bind(ctx, call, signature)
        value = bound["input"]
        dim_value = bound.get("dim")
        keepdim = bound.get("keepdim")
        keep = bool(keepdim.static) if keepdim is not None and keepdim.static is not None else False
        if dim_value is not None and dim_value.is_tensor and runtime in ("torch_max", "torch_min"):
            (a, b), layout, rank = ctx.unify([value, dim_value])
            function = "tf.maximum" if runtime == "torch_max" else "tf.minimum"
            return tensor(f"{function}({a.code}, {b.code})", rank, layout)
        dims = dim_value.static if dim_value is not None else None
        if isinstance(dims, int) and not isinstance(dims, bool):
            dims = (dims,)
        extra = {k: ctx.plain(v) for k, v in call.kwargs.items() if k not in ("dim", "keepdim", "input")}
        if isinstance(value.static, OutputRows) and not tuple_result_of(runtime, dim_value):
            # (the WS paper's `weight.view(weight.size(0), -1).std(dim=1)`: over the kernel as it lies)
            rows = reduced_rows(ctx, runtime, value.static, dims, keep, {
                **extra, **({"unbiased": ctx.plain(bound["unbiased"])} if "unbiased" in bound else {})})
            if rows is not None:
                return rows
        name = _runtime(ctx, runtime)
        if runtime == "norm" and "p" in bound:  # (`torch.norm(x, 2, 1)`: the order is written out; the dim, a
            extra["p"] = ctx.plain(bound["p"])  # keyword below, never read as the order)
        tuple_result = tuple_result_of(runtime, dim_value)
        if value.channels_last and value.rank is not None and isinstance(dims, (tuple, list)) and all(
                isinstance(d, int) for d in dims):
            rank = value.rank
            normalised = sorted(d % rank for d in dims)
            axes = [remap_axis(d, rank) for d in normalised]
            axis_code = str(axes[0]) if len(axes) == 1 and isinstance(dim_value.static, int) else repr(tuple(axes))
            kwargs = {"keepdim": python("True")} if keep else {}
            code = f"{name}({_axis_args(ctx, runtime, value, axis_code, {**kwargs, **extra})})"
            if keep:  # (the reduced dims have size 1: brought to torch's order by a reshape, DGCNN's `xx`)
                result = tensor("", rank, "channels_last").but(unit_dims=_kept_units(value, normalised))
            else:
                remaining = rank - len(normalised)
                layout = "source" if 1 in normalised else "channels_last"
                result = tensor("", remaining, layout)
            if tuple_result:
                return Value(code, "tuple", items=(result.with_code(f"{code}[0]"), result.but(
                    code=f"{code}[1]")))
            return result.with_code(code)
        if is_permuted(value) and value.rank is not None and isinstance(dims, (tuple, list)) and dims and all(
                isinstance(d, int) for d in dims):
            return _reduction_in_layout(ctx, name, value, dims, keep, extra, tuple_result, runtime)
        counts = "int" if runtime == "torch_sum" and value.dtype in ("bool", "int") else None
        if _over_every_element(runtime, value, bound, call.kwargs, dim_value, keep):
            # (`x.mean()` of an image held channels-last: the elements in any order, the tensor as it is held)
            return tensor(f"{name}({ctx.join_args([value], extra)})", 0).but(dtype=counts)
        plain = ctx.plain(value)
        args = [plain] + [ctx.plain(v) for k, v in bound.items() if k in ("dim",)]
        kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items() if k not in ("dim", "input")}
        if "keepdim" in bound and "keepdim" not in call.kwargs:
            kwargs["keepdim"] = bound["keepdim"]
        if runtime == "norm" and "p" in bound:
            kwargs["p"] = ctx.plain(bound["p"])
        if "dim" in call.kwargs or runtime == "norm" and "dim" in bound:
            args = [plain]
            kwargs = {"dim": ctx.plain(bound["dim"]), **{
                k: v for k, v in kwargs.items() if k != "dim"}}
        code = f"{name}({ctx.join_args(args, kwargs)})"
        rank = None
        if plain.rank is not None:
            if dims is None:
                rank = plain.rank if keep else 0
            elif isinstance(dims, (tuple, list)):
                rank = plain.rank if keep else plain.rank - len(dims)
        units = _kept_units(plain, sorted(d % plain.rank for d in dims)) if keep and plain.rank is not None and \
            isinstance(dims, (tuple, list)) and all(isinstance(d, int) for d in dims) else None
        if tuple_result:
            return Value(code, "tuple", items=(tensor(f"{code}[0]", rank).but(unit_dims=units),
                                               tensor(f"{code}[1]", rank).but(unit_dims=units)))
        return tensor(code, rank).but(dtype=counts, unit_dims=units)

    return translate


def tuple_result_of(runtime, dim_value):
    """Whether a reduction gives (values, indices): max/min along a dim."""
    return runtime in ("torch_max", "torch_min") and dim_value is not None


def _kept_units(value, reduced):
    """The size-1 dims of a keepdim reduction of `value` over torch dims `reduced` (and those `value` had)."""
    return tuple(sorted({*reduced, *(value.unit_dims or ())})) or None


# reductions whose value over every element does not depend on the order they are read in (argmax's flat index does)
_ORDER_FREE = {"torch_sum", "mean", "prod", "amax", "amin", "torch_max", "torch_min", "std", "var", "norm",
               "torch_all", "torch_any"}


def _over_every_element(runtime, value, bound, keywords, dim_value, keep):
    """Whether the reduction reads every element of a tensor held in another layout than torch's, to one value: no
    dim (or dim=None), no keepdim, nothing else given by position."""
    return runtime in _ORDER_FREE and value.is_tensor and value.layout != "source" and not keep and (
        dim_value is None or dim_value.code == "None") and all(
            name in ("input", "dim", "keepdim") or name in keywords or runtime == "norm" and name == "p"
            for name in bound)


def _axis_args(ctx, runtime, value, axis_code, kwargs):
    """The arguments of a reduction's runtime call over the stored axes `axis_code`: after the input, or as `dim=`
    for torch.norm (whose second parameter is the order `p`)."""
    if runtime == "norm":
        return ctx.join_args([value], {"dim": python(axis_code), **kwargs})
    return ctx.join_args([value, python(axis_code)], kwargs)


def _reduction_in_layout(ctx, name, value, dims, keep, extra, tuple_result, runtime=None):
    """A reduction over literal dims of a permuted tensor (a radix axis split off the channels, held after the
    spatial axes): the stored axes that hold those dims are reduced, the rest keep their stored order."""
    order = physical_order(value)
    normalised = sorted({d % value.rank for d in dims})
    axes = [order.index(d) for d in normalised]
    axis_code = str(axes[0]) if len(axes) == 1 else repr(tuple(axes))
    kwargs = {"keepdim": python("True")} if keep else {}
    code = f"{name}({_axis_args(ctx, runtime, value, axis_code, {**kwargs, **extra})})"
    out_order = order if keep else reduced_order(order, normalised)
    result = tensor("", len(out_order)).but(layout=layout_of_order(out_order), rank=len(out_order),
                                            unit_dims=_kept_units(value, normalised) if keep else None)
    if tuple_result:
        return Value(code, "tuple", items=(result.with_code(f"{code}[0]"), result.with_code(f"{code}[1]")))
    return result.with_code(code)


# --- elementwise ------------------------------------------------------------------------------------------
def operand(code):
    """`code` as an operand of a binary operator: parenthesised unless it is one name, attribute, call, subscript
    or literal (`torch.sub(y, y - 1.0)` is `y - (y - 1.0)`)."""
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:
        return f"({code})"
    if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) or isinstance(node, ast.Constant) and \
            not (isinstance(node.value, (int, float)) and code.lstrip().startswith("-")):
        return code
    return f"({code})"


def _elementwise(template, arity=1, dtype=None, floating=False):
    """Elementwise op written as a code template over its tensor arguments; layouts unified, kept. `floating`: a
    float math function (sqrt, exp, sin, ...), which torch computes in float32 for an integer tensor and TensorFlow
    refuses one: an integer tensor porter can see (`torch.arange(1, n + 1).sqrt()`) is cast first."""

    def translate(ctx, call):
        args = call.all_args()[:arity] + [v for k, v in call.kwargs.items() if k in ("other", "exponent")]
        args = args[:arity]
        unified, layout, rank = ctx.unify(args)
        if floating:
            unified = [v.but(code=f"tf.cast({v.code}, tf.float32)", dtype=None) if v.is_tensor and v.dtype == "int"
                       else v for v in unified]
        codes = [operand(v.code) if template.startswith("{") else v.code for v in unified]
        return tensor(template.format(*codes), rank, layout).but(dtype=dtype)

    return translate


def translate_masked_fill(ctx, call):
    bound = _bind(ctx, call, "(input, mask, value)")
    (value, mask), layout, rank = ctx.unify([bound["input"], bound["mask"]])
    if rank is None and mask.is_tensor and mask.rank is None and value.is_tensor and layout == "source":
        # a mask of unknown rank (attention's `mask.unsqueeze(1)` under `if mask is not None`) fills the tensor it
        # is a mask of: torch's in-place form requires it to broadcast to that tensor's shape, and models build
        # it so, so the result keeps the tensor's rank (an einsum after a softmax over the scores reads it)
        rank = value.rank
    fill = ctx.plain(bound["value"])
    return tensor(f"{_runtime(ctx, 'masked_fill')}({value.code}, {mask.code}, {fill.code})", rank, layout)


def translate_where(ctx, call):
    bound = _bind(ctx, call, "(condition, input=None, other=None)")
    if "input" not in bound:
        return ctx.unsupported("torch.where(condition)", "the result's size depends on the data (not XLA)")
    values, layout, rank = ctx.unify([bound["condition"], bound["input"], bound["other"]])
    return tensor(f"{_runtime(ctx, 'where')}({', '.join(v.code for v in values)})", rank, layout)


def translate_clamp(ctx, call):
    bound = _bind(ctx, call, "(input, min=None, max=None)")
    value = bound["input"]
    kwargs = {}
    for name in ("min", "max"):
        if name in bound:
            kwargs[name] = ctx.plain(bound[name])
    return tensor(f"{_runtime(ctx, 'clamp')}({ctx.join_args([value], kwargs)})", value.rank,
                  value.layout)


def _keep_layout(runtime):
    """Ops on one tensor that keep its layout and take no axis (casts, clone, detach)."""

    def translate(ctx, call):
        args = call.all_args()
        value = args[0]
        rest = [ctx.plain(v) for v in args[1:]]
        kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items()}
        if runtime is None:
            return value
        return tensor(f"{_runtime(ctx, runtime)}({ctx.join_args([value] + rest, kwargs)})",
                      value.rank, value.layout)

    return translate


def _cast(dtype):
    def translate(ctx, call):
        value = call.all_args()[0]
        return cast_to(value, f"tf.{dtype}")

    return translate


def cast_to(value, dtype_code):
    """`value` cast to the TensorFlow dtype `dtype_code`, in the layout it lies in; an integer dtype is noted (a
    narrow one with its `int_width`), so arithmetic meeting a float tensor or an int64 one promotes as torch does
    (masked mean pooling's `(out * mask.unsqueeze(-1)).sum(1)` of `mask = (tokens != 0).long()`)."""
    result = tensor(f"tf.cast({value.code}, {dtype_code})", value.rank, value.layout)
    if dtype_code in NARROW_INTS:
        return result.but(dtype="int", int_width=dtype_code)
    return result.but(dtype="int") if dtype_code == "tf.int64" else result


def translate_type_as(ctx, call):
    """`x.type_as(other)`: x cast to other's dtype, in the layout x lies in (other's layout says nothing of it)."""
    bound = _bind(ctx, call, "(input, other)")
    value, other = bound["input"], bound["other"]
    if not value.is_tensor:
        value = ctx.plain(value)
    return value.but(code=f"{_runtime(ctx, 'type_as')}({value.code}, {other.code})", dtype=other.dtype,
                     static=None)


def translate_size(ctx, call):
    """x.size() / x.size(i) / x.shape: torch's dims read from the right axes."""
    value = call.all_args()[0]
    dims = call.all_args()[1:] or list(call.kwargs.values())
    size = Value(value.code, "size", value.rank, value.layout)
    if dims and isinstance(dims[0].static, int):
        return ctx.dim_size(size, dims[0].static)
    if dims:
        ctx.runtime("torch_size")
        return python(f"torch_size({value.code}{ctx.layout_flag(value)})[{dims[0].code}]")
    return size


def translate_dim(ctx, call):
    value = call.all_args()[0]
    return python(f"len({value.code}.shape)", static=value.rank)


def translate_numel(ctx, call):
    value = call.all_args()[0]
    ctx.runtime("torch_numel")
    return python(f"torch_numel({value.code})")


def einsum_matmul(ctx, left, right):
    """a @ b for same-rank operands as one einsum over their physical layouts: pending transposes are free."""
    rank = left.rank
    batch = "abcdefgh"[:rank - 2]
    torch_left, torch_right = batch + "ik", batch + "kj"
    order_left, order_right = physical_order(left), physical_order(right)
    inputs = ["".join(torch_left[d] for d in order_left), "".join(torch_right[d] for d in order_right)]
    recipe = EinsumRecipe(inputs, [left.code, right.code], batch + "ij", ctx.variables())
    return tensor(recipe.code(), rank).but(static=recipe)


def held_for_einsum(left, right):
    """Whether `left @ right` is written as one einsum over the operands as they are stored: both of one known rank
    (2 or more), one of them permuted or channels-last (a pending transpose or a layout then moves no data)."""
    if not (left.is_tensor and right.is_tensor and left.rank is not None and left.rank == right.rank and
            left.rank >= 2 and (is_permuted(left) or is_permuted(right) or left.channels_last or right.channels_last)):
        return False
    batch = left.rank - 2
    units = [{d for d in v.unit_dims or () if d < batch} for v in (left, right)]
    return units[0] == units[1]
    # (a batch dim of size 1 broadcasts in torch's matmul, which an einsum's shared label does not: CapsNet's
    # `torch.matmul(self.W, x.unsqueeze(1).unsqueeze(4))` is a tf.matmul, which broadcasts as torch does; a size-1
    # batch dim both operands have, GCNet's `torch.matmul(input_x, mask)` of two `unsqueeze(1)`s, is an einsum's)


def translate_matmul(ctx, call):
    raw = call.all_args()
    if len(raw) == 2 and held_for_einsum(raw[0], raw[1]):
        return einsum_matmul(ctx, raw[0], raw[1])
    args = [ctx.plain(v) for v in call.all_args()]
    ranks = [v.rank for v in args]
    rank = max(ranks) if None not in ranks else None
    name = call.canonical.rsplit(".", 1)[1]
    if name in ("bmm", "mm") or (None not in ranks and min(ranks) >= 2):
        return tensor(f"tf.matmul({args[0].code}, {args[1].code})", rank)
    return tensor(f"{_runtime(ctx, 'matmul')}({args[0].code}, {args[1].code})", rank)


def translate_new_tensor(kind):
    def translate(ctx, call):
        args = call.all_args()
        value = args[0] if args[0].is_tensor else ctx.plain(args[0])  # (only its dtype is read: as it is held)
        sizes = [ctx.plain(v) for v in args[1:]]
        kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items()}
        size_code = sizes[0].code if len(sizes) == 1 else "(" + ", ".join(v.code for v in sizes) + ")" if sizes \
            else "()"
        rest = ""
        if kind == "full":
            size_code = sizes[0].code
            rest = f", fill_value={sizes[1].code}" if len(sizes) > 1 else ""
        for name, arg in kwargs.items():
            if name in ("dtype", "fill_value", "size"):
                rest += f", {name}={arg.code}"
        rank = len(sizes) if len(sizes) > 1 and kind != "full" else None  # (`x.new_zeros(B, T)`: one size a dim)
        return tensor(f"{_runtime(ctx, 'new_tensor_like')}({value.code}, {kind!r}, {size_code}{rest})", rank)

    return translate


NEW_TENSOR = Signature.parse("(input, data, dtype=None, device=None, requires_grad=False)")


def translate_new_tensor_of_data(ctx, call):
    """`x.new_tensor(data)`: the data (in torch's order) as a tensor of x's dtype unless `dtype` says."""
    bound = call.bind(NEW_TENSOR)
    data = ctx.plain(bound["data"])
    dtype = f", dtype={ctx.plain(bound['dtype']).code}" if "dtype" in bound else ""
    code = f"{_runtime(ctx, 'tensor_new_tensor')}({ctx.plain(bound['input']).code}, {data.code}{dtype})"
    return tensor(code, data.rank if data.is_tensor else None).but(
        dtype=None if dtype else bound["input"].dtype)


_DOTTED_NAME = re.compile(r"[A-Za-z_][\w.]*")


def _creation(runtime, rank_from_args=True):
    def translate(ctx, call):
        args = [ctx.plain(v) for v in call.all_args()]
        kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items() if k not in (
            "device", "requires_grad", "layout", "pin_memory", "memory_format", "out")}
        rank = None
        if rank_from_args:
            if len(args) == 1 and isinstance(args[0].static, (tuple, list)):
                rank = len(args[0].static)
            elif len(args) == 1 and args[0].kind == "size" and args[0].rank is not None:
                rank = args[0].rank
            elif len(args) == 1 and _written_sizes(args[0]) is not None:
                rank = len(_written_sizes(args[0]))  # `torch.empty((N, N))`: sizes porter cannot read, listed
            elif len(args) == 1 and not isinstance(args[0].static, int) and (
                    args[0].kind == "size" or not _DOTTED_NAME.fullmatch(args[0].code)):
                rank = None  # `torch.zeros(x.shape[-2:])`, `torch.ones(n * 2)`: maybe a size of unknown length
            elif args and all(v.kind != "starred" for v in args):
                rank = len(args)
        if runtime in ("zeros_like", "ones_like", "full_like", "rand_like", "randn_like") and call.all_args():
            source = call.all_args()[0]
            rank = source.rank
            args[0] = source
            code = f"{_runtime(ctx, runtime)}({ctx.join_args(args, kwargs)})"
            return tensor(code, rank, source.layout)
        if runtime in ("arange", "linspace", "logspace"):
            rank = 1
        result = tensor(f"{_runtime(ctx, runtime)}({ctx.join_args(args, kwargs)})", rank)
        if runtime in ("arange", "randint") and "dtype" not in kwargs and all(
                isinstance(v.static, int) or v.kind == "python" and v.static is None and "." not in v.code
                for v in args):
            result = result.but(dtype="int")
        elif "dtype" in kwargs and kwargs["dtype"].code in FLOAT_DTYPES:
            result = result.but(dtype="float")  # a comparison with an integer tensor promotes that one
        elif "dtype" in kwargs and kwargs["dtype"].code == "tf.bool":
            result = result.but(dtype="bool")  # (ESPnet's `torch.ones(..., dtype=torch.bool)` mask, compared with 0)
        elif runtime == "arange" and "dtype" in kwargs and (kwargs["dtype"].code == "tf.int64" or
                                                             kwargs["dtype"].code in NARROW_INTS):
            # `torch.arange(n, dtype=torch.long) * ratio` (timm's mvitv2.py): an integer tensor, promoted as torch
            # promotes it where it meets a float (narrow widths: with_kept_dtype)
            result = result.but(dtype="int")
        return result

    return translate


LEGACY_CONSTRUCTORS = {"torch.Tensor": "tf.float32", "torch.FloatTensor": "tf.float32", "torch.LongTensor": "tf.int64"}


def translate_tensor_new(ctx, call):
    """`x.new(...)`: a torch.Size argument (`x.new(y.size())`) gives sizes, spread; anything else as given. Only x's
    dtype is read: x is passed as it lies (no conversion to torch's layout)."""
    given = call.all_args()
    source, args = given[0], [ctx.plain(v) for v in given[1:]]
    codes = [f"*{args[0].code}"] if len(given) == 2 and given[1].kind == "size" else [a.code for a in args]
    rank = given[1].rank if len(given) == 2 and given[1].kind == "size" else len(args) if len(args) > 1 else None
    return tensor(f"{_runtime(ctx, 'tensor_new')}({', '.join([source.code, *codes])})", rank)


def translate_tensor_literal(ctx, call):
    if call.canonical in LEGACY_CONSTRUCTORS and not call.kwargs:  # `torch.LongTensor(n)`: n entries (sizes or data)
        given = call.all_args()
        dtype = LEGACY_CONSTRUCTORS[call.canonical]
        if len(given) == 1 and given[0].kind == "size":  # `torch.Tensor(x.size())`: a torch.Size gives sizes
            code = f"*{ctx.plain(given[0]).code}"
            return tensor(f"{_runtime(ctx, 'legacy_tensor')}({code}, dtype={dtype})", given[0].rank)
        args = [ctx.plain(v) for v in given]
        statics = [v.static for v in given]
        # two or more arguments are always sizes (the data form takes one)
        rank = len(statics) if len(statics) > 1 or statics and isinstance(statics[0], int) else \
            _nesting(statics[0]) if len(statics) == 1 and isinstance(statics[0], (list, tuple)) else None
        handed = "".join(f"{a.code}, " for a in args)  # (none: `torch.Tensor()`, an empty tensor)
        return tensor(f"{_runtime(ctx, 'legacy_tensor')}({handed}dtype={dtype})", rank if args else 1)
    if call.canonical == "torch.as_tensor" and len(call.all_args()) == 1 and "dtype" not in call.kwargs:
        # a tensor as it is, not a copy (MONAI: `nn.init.constant_(torch.as_tensor(m.bias), 0)` initialises the
        # parameter itself); data porter cannot type goes through the runtime, which keeps tensors and variables
        given = call.all_args()[0]
        if given.is_tensor:
            return given
        if given.static is None:
            return tensor(f"{_runtime(ctx, 'as_tensor')}({ctx.plain(given).code})")
    args = [ctx.plain(v) for v in call.all_args()]
    kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items() if k in ("dtype",)}
    static = call.all_args()[0].static if call.all_args() else None
    rank = _nesting(static) if static is not None else None
    if rank is None and call.all_args() and call.all_args()[0].kind == "python" and \
            call.all_args()[0].dtype in ("float", "int"):
        rank = 0  # a number porter knows is one (`torch.finfo(x.dtype).min`, `np.log(n) / k`)
    return tensor(f"{_runtime(ctx, 'tensor_from')}({ctx.join_args(args[:1], kwargs)})", rank)


def _nesting(value):
    rank = 0
    while isinstance(value, (list, tuple)):
        rank += 1
        value = value[0] if value else None
    return rank


def translate_contiguous(ctx, call):
    return call.all_args()[0]  # layout and any pending transpose carry over


def translate_is_contiguous(ctx, call):
    return python("True", static=True)  # TensorFlow tensors have no strides: always laid out densely


def translate_moments(ctx, call):
    """torch.var_mean / std_mean: the (spread, mean) pair; over literal dims of a channels-last or permuted tensor
    (a Conv subclass's kernel, standardised) the stored axes that hold them are reduced, else in torch's layout."""
    name = call.canonical.rsplit(".", 1)[1]
    bound = _bind(ctx, call, "(input, dim=None, unbiased=True, keepdim=False, *, correction=None)")
    value, dims = bound["input"], bound["dim"].static if "dim" in bound else None
    dims = (dims,) if isinstance(dims, int) and not isinstance(dims, bool) else dims
    if value.is_tensor and value.rank is not None and physical_order(value) != list(range(value.rank)) and \
            isinstance(dims, (tuple, list)) and dims and all(isinstance(d, int) and not isinstance(d, bool)
                                                             for d in dims):
        keepdim = bound.get("keepdim")
        keep = bool(keepdim.static) if keepdim is not None and keepdim.static is not None else False
        extra = {k: ctx.plain(v) for k, v in bound.items() if k in ("unbiased", "correction")}
        return _reduction_in_layout(ctx, _runtime(ctx, name), value, dims, keep, extra, tuple_result=True)
    args = [ctx.plain(v) for v in call.all_args()]
    kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items()}
    code = f"{_runtime(ctx, name)}({ctx.join_args(args, kwargs)})"
    return Value(code, "tuple", items=(tensor(""), tensor("")))


def translate_to(ctx, call):
    value = call.all_args()[0]
    rest = call.all_args()[1:] + list(call.kwargs.values())
    dtypes = [v for v in rest if v.code.startswith("tf.") and v.code[3:] in (
        "float32", "float64", "float16", "bfloat16", "int64", "int32", "bool", "uint8", "int8", "int16")]
    dtypes += [v for v in rest if v.code.endswith(".dtype")]  # `.to(device, dtype=x.dtype)`
    named = call.kwargs.get("dtype")
    if named is not None and named.code != "None" and named not in dtypes and named.kind == "python" and \
            named.static is None:  # `.to(device=device, dtype=dtype)`, dtype a parameter that may be None
        return _cast_at_run_time(ctx, value, [named])
    if named is not None and named.code != "None":
        dtypes.insert(0, named)
    if dtypes:
        return cast_to(value, dtypes[0].code)
    tensors = [v for v in rest if v.is_tensor]
    if tensors:
        return tensor(f"tf.cast({value.code}, {tensors[0].code}.dtype)", value.rank, value.layout)
    unknown = [v for v in call.all_args()[1:] if v.kind == "python" and v.static is None and v.code != "None"]
    if unknown:  # `x.to(self.dtype)`, `x.to(dtype)`: a dtype (cast) or a device (kept) told apart at run time
        return _cast_at_run_time(ctx, value, unknown)
    return value


def _cast_at_run_time(ctx, value, targets):
    """`value.to(*targets)` where porter cannot tell a dtype from a device (runtime `tensor_to`), in the layout
    `value` lies in; its dtype then unknown."""
    cast = f"{_runtime(ctx, 'tensor_to')}({value.code}, {', '.join(t.code for t in targets)})"
    return value.but(code=cast, dtype=None, int_width=None, static=None) if value.is_tensor else tensor(cast)


def translate_type(ctx, call):
    value = call.all_args()[0]
    rest = call.all_args()[1:] + list(call.kwargs.values())
    if not rest:
        return python(f"{value.code}.dtype.name")
    return cast_to(value, rest[0].code)


def translate_einsum(ctx, call):
    """torch.einsum: operands held in another axis order (a pending transpose, channels-last) are read in place by
    rewriting their subscripts; the result can be asked for in another order by its consumer (EinsumRecipe)."""
    args = call.all_args()
    operands = args[1:]
    if len(operands) == 1 and operands[0].kind == "tuple" and operands[0].items:  # einsum(eq, [a, b])
        operands = list(operands[0].items)
    folded = _einsum_in_layouts(ctx, args[0], operands)
    if folded is not None:
        return folded
    operands = [ctx.plain(v) for v in args[1:]]
    return tensor(f"tf.einsum({args[0].code}, {', '.join(o.code for o in operands)})")


def _einsum_in_layouts(ctx, equation, operands):
    """torch.einsum with a literal explicit equation (no `...`) on tensors of known rank: each operand's subscript
    is written in the order its axes are stored (channels-last, a pending permute), so no operand is transposed,
    and the result is a recipe a later permute re-emits in the order it wants. None otherwise."""
    if not isinstance(equation.static, str) or len(operands) != equation.static.count(",") + 1:
        return None
    text = equation.static.replace(" ", "")
    if "->" not in text or "." in text:
        return None
    inputs, output = text.split("->")
    terms = inputs.split(",")
    # the equation fixes each operand's rank: one of unknown rank held in torch's order reads as written
    operands = [v.but(rank=len(term)) if v.is_tensor and v.rank is None and v.layout == "source" else v
                for v, term in zip(operands, terms)]
    if not all(term.isalpha() for term in terms) or not (output.isalpha() or output == "") or any(
            not v.is_tensor or v.rank != len(term) or v.layout == "flat_channels_last"
            for v, term in zip(operands, terms)):
        return None
    physical = ["".join(term[d] for d in physical_order(v)) for v, term in zip(operands, terms)]
    if len(output) > 2 and any(v.channels_last and term[0] == output[0] and term[2:] == output[2:]
                               for v, term in zip(operands, terms)):
        # an image out with the batch and spatial dims of a channels-last image in (a channel mix `bchw,oc->bohw`):
        # written channels-last too, as the layers after it take it
        held = output[0] + output[2:] + output[1]
        recipe = EinsumRecipe(physical, [v.code for v in operands], held, ctx.variables())
        return tensor(recipe.code(), len(output), "channels_last").but(static=recipe)
    recipe = EinsumRecipe(physical, [v.code for v in operands], output, ctx.variables())
    return tensor(recipe.code(), len(output)).but(static=recipe)


def translate_expand(ctx, call):
    args = call.all_args()
    if is_permuted(args[0]) and len(args) - 1 == args[0].rank and all(v.kind == "python" for v in args[1:]):
        # a pending permute expanded to sizes of its own rank: the sizes given in the order it is stored
        order = physical_order(args[0])
        sizes = [args[1 + d].code for d in order]
        return args[0].but(code=f"{_runtime(ctx, 'expand')}({args[0].code}, {', '.join(sizes)})", static=None)
    value = ctx.plain(args[0])
    sizes = [ctx.plain(v) for v in args[1:]]
    rank = len(sizes) if len(sizes) > 1 else (len(sizes[0].static) if sizes and isinstance(
        sizes[0].static, (tuple, list)) else None)
    if call.canonical.endswith("expand_as"):
        other = args[1]
        if args[0].channels_last or other.channels_last:
            (a, b), layout, rank = ctx.unify([args[0], other])
            return tensor(f"tf.broadcast_to({a.code}, tf.shape({b.code}))", rank, layout)
        if other.is_tensor and other.rank is not None and other.layout != "source" and args[0].is_tensor and \
                args[0].rank == other.rank and args[0].layout == "source" and args[0].unit_dims and \
                _keeps_order_in(args[0], physical_order(other)):
            # a tensor of size-1 dims (the WS paper's per-filter `std.view(-1, 1, 1, 1)`) expanded as a kernel held
            # as the convolution stores it: moved to that order (a reshape: only size-1 dims move), then broadcast
            moved = f"{_runtime(ctx, 'permute_axes')}({args[0].code}, {physical_order(other)})"
            return tensor(f"tf.broadcast_to({moved}, tf.shape({other.code}))", other.rank, other.layout)
        if other.is_tensor and other.rank is not None and other.layout != "source":
            # only the other tensor's torch sizes are read: gathered from its stored shape, not transposed for it
            order = physical_order(other)
            axes = [order.index(d) for d in range(other.rank)]
            return tensor(f"tf.broadcast_to({value.code}, tf.gather(tf.shape({other.code}), {axes}))", other.rank)
        return tensor(f"tf.broadcast_to({value.code}, tf.shape({ctx.plain(other).code}))", other.rank)
    written = [v.static for v in sizes]
    if len(sizes) == 1 and isinstance(sizes[0].static, (tuple, list)):
        written = list(sizes[0].static)
    elif len(sizes) == 1 and _written_sizes(sizes[0]) is not None:
        written = [v.static for v in _written_sizes(sizes[0])]  # `expand([n, 1, -1, -1])`: not all literal
        rank = len(written)
    units = tuple(d for d, size in enumerate(written) if size == 1 and not isinstance(size, bool))
    # (a written 1 is a size-1 dim: CoordConv's `y.expand([n, 1, -1, -1])` of a meshgrid, one channel)
    return tensor(f"{_runtime(ctx, 'expand')}({ctx.join_args([value] + sizes, {})})", rank).but(
        unit_dims=units or None)


def _keeps_order_in(value, order):
    """Whether `value`'s dims other than its size-1 ones keep their order when stored in `order`."""
    kept = [d for d in order if d not in (value.unit_dims or ())]
    return kept == sorted(kept)


def translate_repeat(ctx, call):
    """`x.repeat(*sizes)` in torch's order: the result has a dim per size (leading ones added)."""
    args = call.all_args()
    sizes = args[1:]
    rank = len(sizes) if len(sizes) > 1 and all(v.kind == "python" for v in sizes) else (
        len(sizes[0].static) if len(sizes) == 1 and isinstance(sizes[0].static, (tuple, list)) else
        1 if len(sizes) == 1 and isinstance(sizes[0].static, int) else None)
    return _plain_call(ctx, "repeat", call, rank=rank)


# --- registrations ----------------------------------------------------------------------------------------
function_rule("Tensor.view", "Tensor.reshape", "torch.reshape", translate=translate_view, layout="source",
              keeps_dtype=True)
function_rule("Tensor.view_as", "Tensor.reshape_as", runtime="view_as", signature="(input, other)", layout="source",
              keeps_dtype=True, translate=translate_reshape_as)  # (a standardised kernel's rows: kernel_rows.py)
function_rule("torch.flatten", "Tensor.flatten", translate=translate_flatten, layout="any", keeps_dtype=True)
function_rule("torch.unflatten", "Tensor.unflatten", translate=translate_unflatten, runtime="unflatten", layout="any",
              keeps_dtype=True)
function_rule("torch.permute", "Tensor.permute", translate=translate_permute, layout="any", keeps_dtype=True)
function_rule("torch.transpose", "Tensor.transpose", "torch.swapaxes", "Tensor.swapaxes", "torch.swapdims",
              "Tensor.swapdims", translate=translate_transpose, layout="any", same_rank=True, keeps_dtype=True)
function_rule("torch.t", "Tensor.t", translate=translate_t, layout="source", keeps_dtype=True)
function_rule("torch.squeeze", "Tensor.squeeze", translate=_rank_change(-1), layout="source", keeps_dtype=True)
function_rule("torch.unsqueeze", "Tensor.unsqueeze", translate=_rank_change(+1), layout="source", keeps_dtype=True)
# (as values, the runtime's functions of torch's signature: denoising-diffusion-pytorch's `map(partial(torch.cat,
# dim=-2), ((mk, k), (mv, v)))`)
function_rule("torch.cat", "torch.concat", "torch.concatenate", translate=translate_cat, layout="any",
              value_runtime="cat")
function_rule("torch.stack", translate=translate_cat, layout="any", value_runtime="stack")
function_rule("torch.split", "Tensor.split", "torch.chunk", "Tensor.chunk", "torch.unbind", "Tensor.unbind",
              translate=translate_split, layout="any")
function_rule("Tensor.expand", "Tensor.expand_as", translate=translate_expand, layout="source", keeps_dtype=True)
function_rule("Tensor.repeat", translate=translate_repeat, layout="source", keeps_dtype=True)
def translate_repeat_interleave(ctx, call):
    """A channels-last image repeated along a literal dim, on the axis that holds it (a nearest upsampling written
    out: `y.repeat_interleave(2, dim=2)`); anything else in torch's order, as the rule declares (so a block's
    parameter is laid out as before: WaveRNN's Stretch2d of an unsqueezed sequence)."""
    rule = ctx.function_rule("torch.repeat_interleave")
    value = call.all_args()[0] if call.all_args() else None
    if value is not None and value.is_tensor and value.channels_last and value.rank:
        # (of any layout for this call only: registered so, it changes the layout the classes calling it take
        # their parameters in: WaveRNN went from 5 Transposes to 10)
        rule = replace(rule, layout="any")
    return ctx.apply_declarative(rule, call)


# (held, `dim` is remapped to the axis that holds it; `repeats` counts, it is no operand; without a dim it flattens,
# in torch's order)
function_rule("torch.repeat_interleave", "Tensor.repeat_interleave", runtime="repeat_interleave",
              signature="(input, repeats, dim=None, output_size=None)", layout="source", axis_params=("dim",),
              index_params=("repeats",), implicit_dim_needs_source=True, keeps_dtype=True,
              translate=translate_repeat_interleave)
# (`torch.spmm(adj, support)`, pygcn's graph convolution, and `torch.sparse.mm`: the port holds the adjacency dense)
function_rule("torch.matmul", "Tensor.matmul", "torch.bmm", "Tensor.bmm", "torch.mm", "Tensor.mm", "torch.spmm",
              "torch.sparse.mm", translate=translate_matmul, layout="source")
function_rule("torch.einsum", translate=translate_einsum, layout="source")

for _name, _runtime_name in (("sum", "torch_sum"), ("mean", "mean"), ("prod", "prod"), ("amax", "amax"),
                             ("amin", "amin"), ("logsumexp", "logsumexp"), ("max", "torch_max"),
                             ("min", "torch_min"), ("argmax", "argmax"), ("argmin", "argmin"),
                             ("std", "std"), ("var", "var"), ("norm", "norm"), ("all", "torch_all"),
                             ("any", "torch_any")):
    _signature = "(input, p='fro', dim=None, keepdim=False, dtype=None)" if _name == "norm" else \
        "(input, dim=None, unbiased=True, keepdim=False)" if _name in ("std", "var") else \
        "(input, dim=None, keepdim=False, dtype=None)"
    function_rule(f"torch.{_name}", f"Tensor.{_name}", translate=_reduction(_runtime_name, _signature),
                  layout="any", value_runtime=_runtime_name)
function_rule("torch.cumsum", "Tensor.cumsum", runtime="cumsum", signature="(input, dim, dtype=None)",
              layout="any", axis_params=("dim",), keeps_dtype=True)

_UNARY = {
    "abs": "tf.abs({0})", "exp": "tf.exp({0})", "log": "tf.math.log({0})", "sqrt": "tf.sqrt({0})",
    "rsqrt": "tf.math.rsqrt({0})", "sin": "tf.sin({0})", "cos": "tf.cos({0})", "neg": "-{0}",
    "reciprocal": "tf.math.reciprocal({0})", "floor": "tf.floor({0})", "ceil": "tf.math.ceil({0})",
    "round": "tf.round({0})", "sign": "tf.sign({0})", "erf": "tf.math.erf({0})", "log1p": "tf.math.log1p({0})",
    "expm1": "tf.math.expm1({0})", "square": "tf.square({0})", "log2": "tf.math.log({0}) / math.log(2.0)",
    "exp2": "tf.pow(2.0, {0})", "logical_not": "tf.logical_not({0})", "isnan": "tf.math.is_nan({0})",
    "isinf": "tf.math.is_inf({0})", "isfinite": "tf.math.is_finite({0})", "trunc": "tf.truncatediv({0}, 1)",
    "atan": "tf.atan({0})", "tan": "tf.tan({0})", "asin": "tf.asin({0})", "acos": "tf.acos({0})",
    "sinh": "tf.sinh({0})", "cosh": "tf.cosh({0})", "frac": "{0} - tf.truncatediv({0}, 1)",
}
_FLOAT_RESULTS = {"exp", "log", "sqrt", "rsqrt", "sin", "cos", "reciprocal", "erf", "log1p", "expm1", "log2", "exp2",
                  "atan", "tan", "asin", "acos", "sinh", "cosh"}
for _name, _template in _UNARY.items():
    # (`value_code`: the function as a value, nerf-pytorch's `periodic_fns = [torch.sin, torch.cos]`, called later)
    pointwise_rule(f"torch.{_name}", f"Tensor.{_name}", translate=_elementwise(
        _template, 1, floating=_name in _FLOAT_RESULTS), layout="any",
        value_code="(lambda input: " + _template.format("tf.convert_to_tensor(input, dtype_hint=tf.float32)") + ")")

_BINARY = {
    "mul": "{0} * {1}", "multiply": "{0} * {1}", "true_divide": "{0} / {1}",
    "floor_divide": "tf.math.floordiv({0}, {1})",
    "remainder": "tf.math.floormod({0}, {1})", "fmod": "tf.math.truncatemod({0}, {1})",
    "maximum": "tf.maximum({0}, {1})", "minimum": "tf.minimum({0}, {1})", "eq": "{0} == {1}", "ne": "{0} != {1}",
    "lt": "{0} < {1}", "gt": "{0} > {1}", "le": "{0} <= {1}", "ge": "{0} >= {1}",
    "logical_and": "tf.logical_and({0}, {1})", "logical_or": "tf.logical_or({0}, {1})",
    "logical_xor": "tf.math.logical_xor({0}, {1})", "atan2": "tf.atan2({0}, {1})",
}
_BOOLEAN_RESULTS = {"eq", "ne", "lt", "gt", "le", "ge", "logical_and", "logical_or", "logical_xor"}
_COMPARISONS = {"eq", "ne", "lt", "gt", "le", "ge"}


def _comparison(template):
    """`mask.eq(0)`, `torch.lt(a, b)`: compared as the `==` / `<` operators are, operands promoted where torch
    compares across dtypes (a bool mask against 0: ESPnet's `mask.eq(0)`)."""

    def translate(ctx, call):
        args = (call.all_args() + [v for k, v in call.kwargs.items() if k == "other"])[:2]
        (value, other), layout, rank = ctx.unify(args)
        value, other = ctx.compared(value, other), ctx.compared(other, value)
        return tensor(template.format(operand(value.code), operand(other.code)), rank, layout).but(dtype="bool")

    return translate


for _name, _template in _BINARY.items():
    _names = [f"torch.{_name}", f"Tensor.{_name}"]
    pointwise_rule(*_names, translate=_comparison(_template) if _name in _COMPARISONS else _elementwise(
        _template, 2, "bool" if _name in _BOOLEAN_RESULTS else None), layout="any")


def translate_sum_with_alpha(operator):
    """torch.add / torch.sub: `input {operator} alpha * other` (alpha 1 by default)."""

    def translate(ctx, call):
        bound = _bind(ctx, call, "(input, other, alpha=1)")
        (value, other), layout, rank = ctx.unify([bound["input"], bound["other"]])
        alpha = bound.get("alpha")
        scaled = operand(other.code) if alpha is None or alpha.static == 1 else \
            f"{operand(ctx.plain(alpha).code)} * {operand(other.code)}"
        return tensor(f"{operand(value.code)} {operator} {scaled}", rank, layout)

    return translate


def translate_div(ctx, call):
    """torch.div / torch.divide: true division, or the quotient rounded by `rounding_mode` ("floor", "trunc")."""
    bound = _bind(ctx, call, "(input, other, rounding_mode=None)")
    (value, other), layout, rank = ctx.unify([bound["input"], bound["other"]])
    mode = bound.get("rounding_mode")
    if mode is None or mode.static is None and mode.code == "None":
        return tensor(f"{operand(value.code)} / {operand(other.code)}", rank, layout)
    if mode.static not in ("floor", "trunc"):
        return ctx.unsupported(f"{call.canonical}(rounding_mode={mode.code})",
                               "rounding_mode must be a constant: None, 'floor' or 'trunc'")
    return tensor(f"{_runtime(ctx, 'divide_rounded')}({value.code}, {other.code}, {mode.code})", rank, layout)


pointwise_rule("torch.add", "Tensor.add", translate=translate_sum_with_alpha("+"), layout="any")
pointwise_rule("torch.sub", "Tensor.sub", "torch.subtract", "Tensor.subtract", translate=translate_sum_with_alpha("-"),
               layout="any")
pointwise_rule("torch.div", "Tensor.div", "torch.divide", "Tensor.divide", translate=translate_div, layout="any")


def translate_pow(ctx, call):
    args = call.all_args()[:2] + [v for k, v in call.kwargs.items() if k == "exponent"]
    (base, exponent), layout, rank = ctx.unify(args[:2])
    return tensor(f"{_runtime(ctx, 'torch_pow')}({base.code}, {exponent.code})", rank, layout)


pointwise_rule("torch.pow", "Tensor.pow", translate=translate_pow, layout="any")
pointwise_rule("torch.masked_fill", "Tensor.masked_fill", translate=translate_masked_fill, layout="any",
               keeps_dtype=True)
pointwise_rule("torch.where", "Tensor.where", translate=translate_where, layout="any", keeps_dtype=True)
# (as a value, the runtime's clamp of torch's signature: denoising-diffusion-pytorch's `partial(torch.clamp, min=-1.,
# max=1.)`)
pointwise_rule("torch.clamp", "Tensor.clamp", "torch.clip", "Tensor.clip", translate=translate_clamp, layout="any",
               keeps_dtype=True, value_runtime="clamp")
pointwise_rule("torch.clamp_min", "Tensor.clamp_min", translate=_elementwise("tf.maximum({0}, {1})", 2),
               layout="any")
pointwise_rule("torch.clamp_max", "Tensor.clamp_max", translate=_elementwise("tf.minimum({0}, {1})", 2),
               layout="any")

pointwise_rule("Tensor.contiguous", "Tensor.detach", "Tensor.cpu", "Tensor.cuda", "Tensor.requires_grad_",
               "torch.detach", "Tensor.float32", translate=translate_contiguous, layout="any", keeps_dtype=True)
pointwise_rule("Tensor.clone", "torch.clone", translate=_keep_layout("clone"), layout="any", keeps_dtype=True)
function_rule("Tensor.is_contiguous", translate=translate_is_contiguous, layout="any")
function_rule("torch.var_mean", "torch.std_mean", translate=translate_moments)
# `tensor_only`: a value porter could not type, `x.to(...)`, is a tensor
pointwise_rule("Tensor.to", translate=translate_to, layout="any", tensor_only=True)
function_rule("Tensor.type", translate=translate_type, layout="any")
pointwise_rule("Tensor.type_as", translate=translate_type_as, layout="any")
for _method, _dtype in (("float", "float32"), ("double", "float64"), ("half", "float16"), ("bfloat16", "bfloat16"),
                        ("long", "int64"), ("int", "int32"), ("bool", "bool"), ("byte", "uint8")):
    pointwise_rule(f"Tensor.{_method}", translate=_cast(_dtype), layout="any")

function_rule("Tensor.size", translate=translate_size, layout="any")
function_rule("Tensor.dim", "Tensor.ndimension", translate=translate_dim, layout="any")
function_rule("Tensor.numel", "torch.numel", translate=translate_numel, layout="any")
function_rule("torch.sort", "Tensor.sort", runtime="sort", signature="(input, dim=-1, descending=False, stable=False)",
              layout="any", axis_params=("dim",), implicit_dim_needs_source=True, outputs="tuple", result_pair=True)
function_rule("torch.argsort", "Tensor.argsort", runtime="argsort",
              signature="(input, dim=-1, descending=False, stable=False)", layout="any", axis_params=("dim",),
              implicit_dim_needs_source=True, same_rank=True)
function_rule("torch.index_select", "Tensor.index_select", runtime="index_select", signature="(input, dim, index)",
              layout="any", axis_params=("dim",), index_params=("index",))
function_rule("Tensor.item", runtime="item", signature="(input)", layout="source")
function_rule("Tensor.tolist", runtime="tolist", signature="(input)", layout="source", outputs="python")
function_rule("Tensor.numpy", runtime="numpy_value", signature="(input, force=False)", layout="source",
              same_rank=True)

function_rule("torch.arange", translate=_creation("arange", rank_from_args=False), layout="source")
for _name in ("zeros", "ones", "empty", "randn", "rand"):
    function_rule(f"torch.{_name}", translate=_creation(_name), layout="source")
function_rule("torch.full", translate=_creation("full", rank_from_args=False), layout="source")
function_rule("torch.randint", translate=_creation("randint", rank_from_args=False), layout="source")
function_rule("torch.eye", translate=_creation("eye", rank_from_args=False), layout="source")
function_rule("torch.linspace", translate=_creation("linspace", rank_from_args=False), layout="source")
function_rule("torch.logspace", translate=_creation("logspace", rank_from_args=False), layout="source")
for _name in ("zeros_like", "ones_like", "full_like", "rand_like", "randn_like"):
    pointwise_rule(f"torch.{_name}", translate=_creation(_name), layout="any")
function_rule("torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.Tensor", "torch.FloatTensor",
              "torch.LongTensor", translate=translate_tensor_literal, layout="source")
for _kind in ("zeros", "ones", "full", "empty"):
    function_rule(f"Tensor.new_{_kind}", translate=translate_new_tensor("zeros" if _kind == "empty" else _kind),
                  layout="source")
function_rule("Tensor.new_tensor", translate=translate_new_tensor_of_data, layout="source")
function_rule("Tensor.new", translate=translate_tensor_new, runtime="tensor_new", signature="(input, *args)",
              layout="source")
function_rule("torch.tril", "Tensor.tril", runtime="tril", signature="(input, diagonal=0)", layout="source",
              same_rank=True, keeps_dtype=True)
function_rule("torch.triu", "Tensor.triu", runtime="triu", signature="(input, diagonal=0)", layout="source",
              same_rank=True, keeps_dtype=True)
function_rule("torch.gather", "Tensor.gather", runtime="gather", signature="(input, dim, index)", layout="source")
function_rule("torch.topk", "Tensor.topk", runtime="topk", signature="(input, k, dim=-1, largest=True, sorted=True)",
              layout="any", axis_params=("dim",), implicit_dim_needs_source=True, outputs="tuple", result_pair=True)

