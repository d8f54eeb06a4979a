"""Rule: `torch.meshgrid`, coordinate grids from 1-D tensors, `indexing="ij"` (torch's default) or `"xy"`.

Layout "source": the inputs are 1-D (the same in every layout) and the grids come out in torch's order, one per
input, each of rank = the number of inputs (known when the inputs are spelled out, so unpacking and `stack` of the
grids see their rank). Dtype: the inputs' (kept).
"""

from porter.ir.values import Value, tensor
from porter.rules.registry import function_rule


def _grid_inputs(call):
    """The input Values: `meshgrid(a, b)` or `meshgrid([a, b])` (None when they are not spelled out)."""
    args = call.all_args()
    if len(args) == 1 and args[0].kind == "tuple":
        return list(args[0].items) if args[0].items is not None else None
    if any(a.kind == "starred" for a in args):
        return None
    return args


def translate_meshgrid(ctx, call):
    args = [ctx.plain(v) for v in call.all_args()]
    kwargs = {k: ctx.plain(v) for k, v in call.kwargs.items() if k == "indexing"}
    code = f"{ctx.runtime('meshgrid')}({ctx.join_args(args, kwargs)})"
    inputs = _grid_inputs(call)
    if inputs is None:
        return Value(code, "tuple", items=None)
    dtype = inputs[0].dtype if inputs and len({v.dtype for v in inputs}) == 1 else None
    return Value(code, "tuple", items=tuple(tensor(f"{code}[{i}]", len(inputs)).but(dtype=dtype)
                                            for i in range(len(inputs))))


function_rule("torch.meshgrid", translate=translate_meshgrid, layout="source", outputs="tuple")
