"""Rule: `torch.roll` / `Tensor.roll`, a cyclic shift along dims.

Layout "any": with literal `dims` the shift runs on whatever layout arrives (channels-last, or a transpose still
pending) along the physical axes that hold those torch dims, so the layout is kept and nothing is transposed.
Without `dims` torch rolls the flattened tensor, whose order is torch's: the input goes back to torch's layout.
Dtype: kept (a cyclic shift moves values only).
"""

from porter.ir.values import physical_order, tensor
from porter.rules.registry import Signature, function_rule

SIGNATURE = Signature.parse("(input, shifts, dims=None)")


def _literal_dims(value):
    """`dims` as a tuple of ints when the source spells it literally (an int or a tuple/list of ints), else None."""
    static = value.static if value is not None else None
    if isinstance(static, int) and not isinstance(static, bool):
        return (static,)
    if isinstance(static, (tuple, list)) and static and all(
            isinstance(d, int) and not isinstance(d, bool) for d in static):
        return tuple(static)
    return None


def translate_roll(ctx, call):
    bound = call.bind(SIGNATURE)
    value, shifts = bound["input"], ctx.plain(bound["shifts"])
    runtime = ctx.runtime("roll")
    dims = _literal_dims(bound.get("dims"))
    layout_known = value.is_tensor and value.rank is not None and value.layout != "flat_channels_last"
    if dims is not None and layout_known and all(-value.rank <= d < value.rank for d in dims):
        order = physical_order(value)
        axes = tuple(order.index(d % value.rank) for d in dims)
        axes_code = str(axes[0]) if isinstance(bound["dims"].static, int) else repr(axes)
        result = tensor(f"{runtime}({value.code}, {shifts.code}, {axes_code})", value.rank, value.layout)
        return result.but(channels=value.channels, dtype=value.dtype)
    plain = ctx.plain(value)
    arguments = [plain, shifts] + ([ctx.plain(bound["dims"])] if "dims" in bound else [])
    return tensor(f"{runtime}({ctx.join_args(arguments, {})})", plain.rank).but(dtype=value.dtype)


function_rule("torch.roll", "Tensor.roll", translate=translate_roll, layout="any")
