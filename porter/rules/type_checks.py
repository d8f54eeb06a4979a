"""Rule: `torch.is_tensor(x)`: decided where porter knows what `x` is (a tensor: True; a tuple, module or plain
literal: False), else asked at run time (runtime `torch_is_tensor`, also what a bare `is_tensor` reference names)."""

from porter.ir.values import NoneDefault, python
from porter.rules.registry import function_rule


def translate_is_tensor(ctx, call):
    value = call.all_args()[0]
    if value.is_tensor and value.layout != "raises":
        return python("True", static=True)
    if value.kind in ("tuple", "module") or (value.kind == "python" and value.static is not None and
                                             not isinstance(value.static, NoneDefault)):
        # (a parameter at its None default: the translation may serve a caller handing a tensor)
        return python("False", static=False)
    return python(f"{ctx.runtime('torch_is_tensor')}({ctx.plain(value).code})")


function_rule("torch.is_tensor", runtime="torch_is_tensor", translate=translate_is_tensor, layout="source")
