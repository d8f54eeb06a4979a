"""Rule: `torch.Size(sizes)`, a shape built by hand (`F.affine_grid(theta, torch.Size([n, c, 28, 28]))`): a tuple of
the sizes, in torch's order as written. Items spelled out stay known (their count is the shape's rank)."""

from porter.ir.values import Value, python
from porter.rules.registry import Signature, function_rule

SIGNATURE = Signature.parse("(sizes=())")


def translate_size(ctx, call):
    bound = call.bind(SIGNATURE)
    if "sizes" not in bound:
        return python("()", static=())
    sizes = ctx.plain(bound["sizes"])
    code = f"tuple({sizes.code})"
    if sizes.kind == "tuple" and sizes.items is not None and not any(i.kind == "starred" for i in sizes.items):
        return Value(code, "tuple", items=sizes.items, static=sizes.static)
    return python(code, static=sizes.static)


function_rule("torch.Size", translate=translate_size, layout="source", outputs="python")
