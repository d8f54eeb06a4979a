"""Rules: `Tensor.stride` and `Tensor.as_strided` (`torch.as_strided`), read as on torch's contiguous tensor of the
same shape (runtime/strides.py); the tensor goes to torch's order first (layout "source"), whose strides these are."""

from porter.ir.values import python, tensor
from porter.rules.registry import Signature, function_rule

STRIDE = Signature.parse("(input, dim=None)")
AS_STRIDED = Signature.parse("(input, size, stride, storage_offset=0)")


def _stride(ctx, call):
    bound = call.bind(STRIDE)
    args = [ctx.plain(bound["input"])] + ([ctx.plain(bound["dim"])] if "dim" in bound else [])
    return python(f"{ctx.runtime('tensor_stride')}({ctx.join_args(args, {})})")


def _as_strided(ctx, call):
    bound = call.bind(AS_STRIDED)
    args = [ctx.plain(bound[name]) for name in ("input", "size", "stride") if name in bound]
    keywords = {"storage_offset": ctx.plain(bound["storage_offset"])} if "storage_offset" in bound else {}
    size = bound.get("size")
    rank = len(size.items) if size is not None and size.items is not None else (
        len(size.static) if size is not None and isinstance(size.static, (tuple, list)) else None)
    return tensor(f"{ctx.runtime('as_strided')}({ctx.join_args(args, keywords)})", rank)


function_rule("Tensor.stride", translate=_stride, layout="source")
function_rule("Tensor.as_strided", "torch.as_strided", translate=_as_strided, layout="source")
