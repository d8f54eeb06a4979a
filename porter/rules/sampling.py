"""Rule: `torch.multinomial` / `Tensor.multinomial` (sampling in a GPT's `generate`): int64 indices drawn from
the rows of the input's weights. Layout "source" (rows are torch's last axis). Dtype: int64."""

from porter.ir.values import tensor
from porter.rules.registry import Signature, function_rule

SIGNATURE = Signature.parse("(input, num_samples, replacement=False, generator=None)")


def translate_multinomial(ctx, call):
    bound = call.bind(SIGNATURE)
    weights = ctx.plain(bound["input"])
    arguments = [weights] + [ctx.plain(bound[name]) for name in ("num_samples", "replacement")
                             if name in bound]
    code = f"{ctx.runtime('multinomial')}({ctx.join_args(arguments, {})})"
    return tensor(code, weights.rank).but(dtype="int")


function_rule("torch.multinomial", "Tensor.multinomial", translate=translate_multinomial, layout="source")
