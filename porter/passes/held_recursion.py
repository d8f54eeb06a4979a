"""A container reaching itself through a lambda it keeps on `self`: pytorchcv's `DualPathSequential` runs each child
through `self.dual_path_scheme(module, x1, x2)` (`lambda module, x1, x2: module(x1, x2)`), and DPN / SelecSLS nest
one DualPathSequential (a stage) in another (the features), so the container is one of the children its own loop
may call, while its own call is still being translated.

The lambda runs as written (function_attributes.py) where every child takes the values as they are held and hands
back images held channels-last; for the container itself that is taken as given while it is translated (each such
call noted here), then checked once its translation is done: the instance's own case of `call`, translated for
what the lambda hands it, must take those values as they are held and return images held channels-last. When it
does not, the class is translated again with its own call made at run time (`call_module`, as before).
"""

from dataclasses import dataclass

import libcst as cst

from porter.frontend.walk import descendants
from porter.ir.values import python


@dataclass(frozen=True)
class HeldRecursion:
    """A call a lambda makes of the class being translated: the class, the instance's literals (its case of
    `call`), and the argument Values it hands."""

    class_name: str
    static: tuple
    args: tuple
    kwargs: tuple  # ((keyword, Value), ...)


def recursive_calls(ref, function, name, bound):
    """The HeldRecursion of each call lambda `function` makes of its parameter `name` (bound to the class `ref`),
    its other parameters bound to the Values `bound` (in order)."""
    values = dict(zip((p.name.value for p in function.params.params), bound))

    def handed(arg):
        return values.get(arg.value.value, python("x")) if isinstance(arg.value, cst.Name) else python("x")

    found = []
    for node in descendants(function.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == name:
            args = tuple(handed(a) for a in node.args if a.keyword is None and not a.star)
            kwargs = tuple((a.keyword.value, handed(a)) for a in node.args if a.keyword is not None)
            found.append(HeldRecursion(ref.class_name, ref.static, args, kwargs))
    return found


def held_alike_call(signature, call, output):
    """Whether `signature` (the instance's case of `call`, translated; `output` what it returns) takes the values
    `call` hands as they are held and returns images held channels-last (or plain values beside them)."""
    if signature is None or output is None or not held_channels_last(output):
        return False
    wanted = list(signature.arg_values)
    for position, value in enumerate(call.args):
        if position >= len(wanted):
            return False
        if not _takes_as_held(value, wanted[position]):
            return False
    kwarg_values = getattr(signature, "kwarg_values", {}) or {}
    return all(_takes_as_held(value, kwarg_values.get(keyword)) for keyword, value in call.kwargs)


def _takes_as_held(value, wanted):
    if wanted is None:
        return not value.is_tensor
    if value.is_tensor:
        return wanted.is_tensor and wanted.channels_last == value.channels_last
    return value.kind == "python"  # (None on a first turn, a literal: no layout to take)


def held_channels_last(value):
    """An image held channels-last, or a tuple whose every item is one or a plain value (`(x, None)`)."""
    if value.is_tensor:
        return value.layout == "channels_last"
    return value.kind == "tuple" and value.items is not None and all(
        held_channels_last(item) or item.kind == "python" for item in value.items)
