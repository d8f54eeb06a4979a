"""Rules: `F.unfold` / `F.fold` (im2col / col2im), the modules `nn.Unfold` / `nn.Fold`, and `Tensor.unfold`
(windows along one dim).

Layout. unfold of a channels-last (N, H, W, C) tensor gives (N, L, C*kh*kw): torch's (N, C*kh*kw, L) with dim 1
moved last, i.e. channels-last of rank 3, with torch's row order exactly; the common `.transpose(1, 2)` that
follows is then free, and fold reads such a tensor back into channels-last (N, H, W, C). On torch's layout both
run as they are. So the functions never transpose; the modules are channels-last layers (their rule says so).
Dtype: kept (values are only moved, and summed by fold).

`Tensor.unfold(dimension, size, step)` (audio framing, HaloNet's blocks) replaces dim `dimension` by its window
count and appends a dim of `size`: on a channels-last or permuted input the windows are taken where the dim is
stored and the new dim is stored right after it (the result's layout records it); on torch's layout as it is.
"""

from porter.ir.layout import layout_of_order
from porter.ir.values import is_permuted, physical_order, python, tensor
from porter.rules.registry import Signature, function_rule, module_rule

UNFOLD = Signature.parse("(input, kernel_size, dilation=1, padding=0, stride=1)")
FOLD = Signature.parse("(input, output_size, kernel_size, dilation=1, padding=0, stride=1)")
WINDOWS = Signature.parse("(input, dimension, size, step)")


def _patch_call(ctx, call, signature, runtime, channels_last_rank, rank_change):
    """The runtime call on the input as it lies when it is channels-last of `channels_last_rank`, else on
    torch's layout; the result's rank is the input's plus `rank_change`."""
    bound = call.bind(signature)
    value = bound["input"]
    options = {name: ctx.plain(bound[name]) for name in signature.params[1:] if name in bound}
    name = ctx.runtime(runtime)
    if value.channels_last and value.rank == channels_last_rank:
        code = f"{name}({ctx.join_args([value], options)}, channels_last=True)"
        return tensor(code, value.rank + rank_change, "channels_last").but(dtype=value.dtype)
    plain = ctx.plain(value)
    rank = plain.rank + rank_change if plain.rank is not None else None
    return tensor(f"{name}({ctx.join_args([plain], options)})", rank).but(dtype=value.dtype)


def translate_unfold(ctx, call):
    return _patch_call(ctx, call, UNFOLD, "unfold", 4, -1)


def translate_fold(ctx, call):
    return _patch_call(ctx, call, FOLD, "fold", 3, +1)


def translate_windows(ctx, call):
    """`x.unfold(dimension, size, step)`: on a tensor held channels-last or permuted, the windows are taken along
    the axis that holds the dim and their new dim is stored right after it (no transpose; the result's layout
    says where it lies); else on torch's layout. The result has one dim more."""
    bound = call.bind(WINDOWS)
    value = bound["input"]
    dim = bound["dimension"].static if "dimension" in bound else None
    if value.is_tensor and value.rank is not None and isinstance(dim, int) and not isinstance(dim, bool) and (
            value.channels_last or is_permuted(value)):
        order = physical_order(value)
        dim %= value.rank
        axis = order.index(dim)
        new_order = order[:axis + 1] + [value.rank] + order[axis + 1:]
        arguments = [value, python(str(axis))] + [ctx.plain(bound[name]) for name in WINDOWS.params[2:]]
        code = f"{ctx.runtime('unfold_windows')}({ctx.join_args(arguments, {})}, windows_last=False)"
        return tensor(code, value.rank + 1, layout_of_order(new_order)).but(dtype=value.dtype)
    plain = ctx.plain(value)
    arguments = [plain] + [ctx.plain(bound[name]) for name in WINDOWS.params[1:]]
    rank = plain.rank + 1 if plain.rank is not None else None
    return tensor(f"{ctx.runtime('unfold_windows')}({ctx.join_args(arguments, {})})", rank).but(dtype=plain.dtype)


function_rule("torch.nn.functional.unfold", translate=translate_unfold, layout="any")
function_rule("Tensor.unfold", translate=translate_windows, layout="any")
function_rule("torch.nn.functional.fold", translate=translate_fold, layout="any")
module_rule("torch.nn.Unfold", runtime="Unfold", layout="channels_last", rank=3)
module_rule("torch.nn.Fold", runtime="Fold", layout="channels_last", rank=4)
