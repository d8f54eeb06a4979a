"""Rules: ops that reorder, cut, repeat or regroup a tensor's entries (`torch.flip`/`fliplr`/`flipud`, `rot90`,
`narrow`, `movedim`/`moveaxis`, `tile`, `broadcast_to`, `diagonal`/`diag`/`diag_embed`/`trace`, `take`,
`hstack`/`vstack`/`dstack`, `kron`, `block_diag`).

Layout: flip with literal dims and narrow run on whatever layout arrives along the physical axes that hold the
torch dims (no transpose); the others run in torch's order (layout "source"). Dtype: kept (trace: int64 for
integers, as in torch).
"""

from porter.ir.values import physical_order, python, tensor
from porter.rules.op_helpers import fixed_rank, rank_of, source_call
from porter.rules.registry import function_rule


def _literal_ints(values):
    """The dims a flip names, as a tuple of ints, from its arguments after the input (`x.flip(1, 2)`,
    `torch.flip(x, [1, 2])`, `dims=(3,)`), or None when they are not literal."""
    if len(values) == 1 and isinstance(values[0].static, (tuple, list)):
        values = list(values[0].static)
    else:
        values = [v.static for v in values]
    if values and all(isinstance(d, int) and not isinstance(d, bool) for d in values):
        return tuple(values)
    return None


def _flip(ctx, value, dims, dims_args):
    """`value` reversed along torch dims `dims` (literal) or `dims_args` (Values, any form)."""
    runtime = ctx.runtime("flip")
    layout_known = value.is_tensor and value.rank is not None and value.layout != "flat_channels_last"
    if dims is not None and layout_known and all(-value.rank <= d < value.rank for d in dims):
        order = physical_order(value)
        axes = tuple(order.index(d % value.rank) for d in dims)
        result = tensor(f"{runtime}({value.code}, {axes!r})", value.rank, value.layout)
        return result.but(channels=value.channels, dtype=value.dtype)
    plain = ctx.plain(value)
    return tensor(f"{runtime}({ctx.join_args([plain] + [ctx.plain(v) for v in dims_args], {})})",
                  plain.rank).but(dtype=value.dtype)


def translate_flip(ctx, call):
    args = call.all_args()
    dims_args = args[1:] + [v for k, v in call.kwargs.items() if k == "dims"]
    return _flip(ctx, args[0] if args else call.kwargs["input"], _literal_ints(dims_args), dims_args)


def translate_fliplr(ctx, call):
    value = call.all_args()[0] if call.all_args() else call.kwargs["input"]
    dim = 0 if call.canonical.endswith("flipud") else 1
    return _flip(ctx, value, (dim,), [python(repr((dim,)), static=(dim,))])


function_rule("torch.flip", "Tensor.flip", translate=translate_flip, layout="any")
function_rule("torch.fliplr", "Tensor.fliplr", "torch.flipud", "Tensor.flipud", translate=translate_fliplr,
              layout="any")
function_rule("torch.narrow", "Tensor.narrow", runtime="narrow", signature="(input, dim, start, length)",
              layout="any", axis_params=("dim",))
function_rule("torch.rot90", "Tensor.rot90", translate=source_call("rot90", "(input, k=1, dims=(0, 1))",
                                                                     rank_of("input")), layout="source")
function_rule("torch.movedim", "Tensor.movedim", "torch.moveaxis", "Tensor.moveaxis",
              translate=source_call("movedim", "(input, source, destination)", rank_of("input")), layout="source")


def _tile_rank(bound):
    value, dims = bound.get("input"), bound.get("dims")
    count = len(dims) if isinstance(dims, tuple) else None
    if isinstance(dims, tuple) and len(dims) == 1 and isinstance(dims[0].static, (tuple, list)):
        count = len(dims[0].static)
    elif isinstance(dims, tuple) and any(d.kind == "starred" or not isinstance(d.static, int) for d in dims):
        count = None
    if value is None or value.rank is None or count is None:
        return None
    return max(value.rank, count)


def _broadcast_rank(bound):
    size = bound.get("size")
    return len(size.static) if size is not None and isinstance(size.static, (tuple, list)) else None


function_rule("torch.tile", "Tensor.tile", translate=source_call("tile", "(input, *dims)", _tile_rank),
              layout="source")
function_rule("torch.broadcast_to", "Tensor.broadcast_to",
              translate=source_call("broadcast_to", "(input, size)", _broadcast_rank), layout="source")
function_rule("torch.diagonal", "Tensor.diagonal",
              translate=source_call("diagonal", "(input, offset=0, dim1=0, dim2=1)", rank_of("input", -1)),
              layout="source")


def _diag_rank(bound):
    value = bound.get("input")
    return 3 - value.rank if value is not None and value.rank in (1, 2) else None


function_rule("torch.diag", "Tensor.diag", translate=source_call("diag", "(input, diagonal=0)", _diag_rank),
              layout="source")
function_rule("torch.diag_embed", "Tensor.diag_embed",
              translate=source_call("diag_embed", "(input, offset=0, dim1=-2, dim2=-1)", rank_of("input", 1)),
              layout="source")
function_rule("torch.trace", "Tensor.trace", translate=source_call("trace", "(input)", fixed_rank(0)),
              layout="source")
function_rule("torch.take", "Tensor.take", translate=source_call("take", "(input, index)", rank_of("index")),
              layout="source")
for _name in ("hstack", "vstack", "dstack"):
    function_rule(f"torch.{_name}", translate=source_call(_name, "(tensors)"), layout="source")
function_rule("torch.kron", "Tensor.kron", translate=source_call("kron", "(input, other)"), layout="source")
function_rule("torch.block_diag", translate=source_call("block_diag", "(*tensors)", fixed_rank(2)), layout="source")
