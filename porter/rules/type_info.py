"""Rules: `torch.finfo(dtype)` and `torch.iinfo(dtype)`, Python objects holding a dtype's limits (runtime/type_info)."""

from porter.ir.values import python
from porter.rules.registry import Signature, function_rule


def _type_info(runtime):
    parsed = Signature.parse("(type=None)")

    def translate(ctx, call):
        bound = call.bind(parsed)
        arguments = [ctx.plain(bound["type"])] if "type" in bound else []
        # (its limits are Python numbers: `torch.tensor(torch.finfo(x.dtype).min)` is a 0-d tensor)
        return python(f"{ctx.runtime(runtime)}({ctx.join_args(arguments, {})})").but(dtype=runtime)

    return translate


function_rule("torch.finfo", translate=_type_info("finfo"), layout="source", outputs="python")
function_rule("torch.iinfo", translate=_type_info("iinfo"), layout="source", outputs="python")
