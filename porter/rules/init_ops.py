"""Rules: torch's in-place initialisers `Tensor.normal_`, `uniform_`, `bernoulli_`, `zero_`, `fill_` and `copy_`.

Two receivers, two translations (porter/runtime/init_ops.py):
- an attribute (`self.weight.data.normal_(0, 0.02)` in `__init__` or a `reset_parameters`-style helper,
  `module.bias.zero_()` inside `_init_weights(module)`, `self.running.copy_(x)` in forward): the value is
  assigned in place with `assign_in_place(owner, "name", value)`, so a parameter, buffer or layer weight stays
  the Keras variable that `load_state_dict` and the optimizer hold;
- a local tensor (`noise = torch.empty_like(x); noise.normal_()`): a new tensor of its shape, dtype and layout,
  which the translator rebinds the name to (TensorFlow tensors are immutable);
- a name's `.data` (`param.data.normal_()` in a loop over `self.named_parameters()`): the variable it holds is
  filled in place (`fill_variable`).
Layout: random and constant fills do not depend on it (i.i.d. values); `copy_` reads its source in torch's
layout and gives a weight stored in another layout (a convolution's HWIO kernel) its load-time transform.
Anything else (an indexed receiver such as `weight[0].zero_()`) becomes a stub saying so.
"""

import re

from porter.ir.values import tensor
from porter.rules.registry import function_rule

ATTRIBUTE = re.compile(r"^(?P<owner>.+)\.(?P<name>[A-Za-z_]\w*)$")
# method -> (runtime making the new value, its parameter names after the receiver, their defaults)
FILLS = {
    "normal_": ("normal_like", ("mean", "std"), ("0.0", "1.0")),
    "uniform_": ("uniform_like", ("from", "to"), ("0.0", "1.0")),
    "bernoulli_": ("bernoulli_like", ("p",), ("0.5",)),  # stochastic depth: `x.new_empty(shape).bernoulli_(keep)`
    "zero_": ("zeros_like", (), ()),
    "fill_": ("full_like", ("value",), (None,)),
    "copy_": ("copy_like", ("src",), (None,)),
}


def _receiver_attribute(code):
    """(owner, name) when the receiver is an attribute (`self.conv.bias`; `.data` dropped), else None."""
    code = code.removesuffix(".data")
    match = ATTRIBUTE.match(code)
    if match is None or "(" in match["owner"]:
        return None
    return match["owner"], match["name"]


def _arguments(ctx, call, names, defaults):
    """The initialiser's arguments in order, as torch-layout code; a missing required one raises KeyError."""
    values = dict(zip(names, call.args))
    values.update({k: v for k, v in call.kwargs.items() if k in names})
    codes = []
    for name, default in zip(names, defaults):
        if name in values:
            codes.append(ctx.plain(values[name]).code)
        elif default is not None:
            codes.append(default)
        else:
            raise KeyError(name)
    return codes


def translate_fill(ctx, call):
    method = call.canonical.rsplit(".", 1)[1]
    runtime, names, defaults = FILLS[method]
    receiver = call.receiver
    arguments = _arguments(ctx, call, names, defaults)
    attribute = _receiver_attribute(receiver.code) if receiver.code.startswith(("self.", "self[")) or (
        receiver.kind == "tensor" and "." in receiver.code) else None
    base = receiver.code.removesuffix(".data")
    if attribute is None and base.isidentifier() and base != receiver.code and method != "copy_":
        # `param.data.normal_()` of a loop over `self.named_parameters()`: the variable the name holds is filled in
        # place (layout-free i.i.d. or constant values), a tensor it may hold instead is replaced
        value = f"{ctx.runtime(runtime)}({', '.join([base] + arguments)})"
        return tensor(f"{ctx.runtime('fill_variable')}({base}, {value})", receiver.rank, receiver.layout).but(
            dtype=receiver.dtype)
    if attribute is None and not receiver.code.isidentifier():
        if "(" in receiver.code:  # a fresh value (`x.clone().zero_()`): the functional form is the result
            attribute = None
        else:
            return ctx.unsupported(f"tensor .{method}", "an in-place fill of part of a tensor (an indexed "
                                                        "receiver): write it as an assignment")
    if attribute is not None:
        owner, name = attribute
        if name == "torch_weight":  # a Conv subclass's kernel: fill the variable as stored (fills are layout-free)
            name = "weight"
        target = f"{owner}.{name}"
        value = f"{ctx.runtime(runtime)}({', '.join([target] + arguments)})"
        if method == "copy_":
            value, extra = arguments[0], ", torch_layout=True"
        else:
            extra = ""
        code = f"{ctx.runtime('assign_in_place')}({owner}, {name!r}, {value}{extra})"
        return tensor(code, receiver.rank, receiver.layout).but(dtype=receiver.dtype)
    if method == "copy_":
        source = call.args[0] if call.args else call.kwargs["src"]
        (receiver, source), layout, rank = ctx.unify([receiver, source])
        code = f"{ctx.runtime(runtime)}({receiver.code}, {source.code})"
        return tensor(code, rank, layout).but(channels=receiver.channels, dtype=receiver.dtype)
    code = f"{ctx.runtime(runtime)}({', '.join([receiver.code] + arguments)})"
    return tensor(code, receiver.rank, receiver.layout).but(channels=receiver.channels, dtype=receiver.dtype)


# tensor_only: only tensors have these methods, so `module.weight.data.normal_()` on an untyped helper argument
# is a tensor method call too
function_rule(*(f"Tensor.{method}" for method in FILLS), translate=translate_fill, layout="any", tensor_only=True)
