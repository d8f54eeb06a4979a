"""Rules: MXNet's elementwise math operators (`F.exp`, `F.log`, `F.sqrt`, `x.square()`, ...) ->
porter/runtime/gluon_elementwise.py's `gluon_unary(x, name)`, in whatever layout the operand arrives in (no axis is
read), and `F.take` (an axis and an index tensor: Gluon's order)."""

from porter.ir.values import tensor
from porter.rules.registry import Signature, function_rule

OPS = "mxnet.ndarray."
UNARY = ("exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "square", "abs", "negative", "reciprocal", "erf", "sin",
         "cos", "floor", "ceil", "round", "sign")
_UNARY = Signature.parse("(data, name=None)")


def _unary(name):
    def translate(ctx, call):
        """F.<name>(x): the runtime's op on x as it lies (same layout, rank and channels)."""
        data = call.bind(_UNARY)["data"]
        code = f"{ctx.runtime('gluon_unary')}"
        if data.is_tensor:
            return data.but(code=f"{code}({data.code}, {name!r})")
        return tensor(f"{code}({ctx.plain(data).code}, {name!r})")

    return translate


for _name in UNARY:
    function_rule(OPS + _name, translate=_unary(_name), layout="any")
# the indices' axes replace `axis`: the result's rank depends on theirs
function_rule(OPS + "take", runtime="gluon_take", signature="(a, indices, axis=0, mode='clip', name=None)",
              layout="source", rank_delta="unknown")
