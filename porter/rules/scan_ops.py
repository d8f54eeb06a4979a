"""Rules: running reductions and differences along one dim (`torch.cumprod`, `torch.diff`; `torch.cumsum` is
registered in tensor_ops).

Layout "any": the scan runs on whatever layout arrives and its `dim` is remapped to the physical axis (a
channels-last tensor keeps its layout, no transpose). Dtype: integer and bool inputs give an integer result
(int64 in torch), which the rule records so later integer-only decisions (indexing, division) see it.
"""

from porter.rules.registry import function_rule


def translate_cumprod(ctx, call):
    """The declarative translation (dim remapped by `axis_params`), with torch's integer result recorded."""
    result = ctx.apply_declarative(ctx.function_rule(call.canonical), call)
    first = call.all_args()[0] if call.all_args() else None
    if first is not None and first.dtype in ("int", "bool") and "dtype" not in call.kwargs:
        result = result.but(dtype="int")
    return result


function_rule("torch.cumprod", "Tensor.cumprod", runtime="cumprod", signature="(input, dim, dtype=None)",
              layout="any", axis_params=("dim",), translate=translate_cumprod)
function_rule("torch.diff", "Tensor.diff", runtime="diff", signature="(input, n=1, dim=-1, prepend=None, append=None)",
              layout="any", axis_params=("dim",))
