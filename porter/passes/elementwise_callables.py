"""Callables porter can tell compute elementwise, held by a module attribute: a call on one passes its input's
layout through, so the module holding it takes any layout.

timm's GammaAct holds `self.act_fn = get_act_fn(act_type)`: a function of the file that returns one of the functions
of a module-level registry (`_ACT_FN_DEFAULT = dict(silu=F.silu if _has_silu else swish, relu=F.relu, ...)`), or
None when no name is given. A callable is elementwise when it is

- a function rule that is pointwise (`F.relu`, `torch.sigmoid`: registered by `pointwise_rule`);
- a function of the file whose body only does arithmetic and calls such rules, tensor methods that are pointwise,
  or other such functions (`def swish(x, inplace=False): return x.mul_(x.sigmoid()) if inplace else ...`);
- either branch of an `a if flag else b` of such callables;
- the result of calling a function of the file each of whose returns is None, such a callable, an item of a
  module-level registry (`NAME = dict(...)` or `{...}`, bound once) whose values all are, or the parameter that a
  string was handed to (`if isinstance(name, Callable): return name`: a string is no callable, so that return is not
  the one taken; the argument is a string literal or a parameter of the caller annotated `str`).

Anything else is not known to be elementwise: such attributes are called through `call_module`, which converts.
"""

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.module_tables import module_level_table
from porter.frontend.returns import return_values
from porter.passes.elementwise_function import elementwise_body
from porter.rules.registry import function_rule_named, is_pointwise

MAX_DEPTH = 6


def is_elementwise_reference(source, node, depth=0):
    """Whether the expression `node` names an elementwise callable (a pointwise function rule, an elementwise
    function of the file, or a conditional choice between such)."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(node, cst.IfExp):
        return is_elementwise_reference(source, node.body, depth + 1) and \
            is_elementwise_reference(source, node.orelse, depth + 1)
    if isinstance(node, cst.Name) and node.value in source.functions:
        return _elementwise_function(source, node.value)
    if isinstance(node, cst.Call) and dotted_name(node.func) == "getattr" and len(node.args) == 2 and \
            not isinstance(node.args[1].value, cst.SimpleString):
        # `getattr(F, act)`: the functions of that module the file names in string literals (calls.py's table)
        owner = source.imports.resolve(node.args[0].value)
        named = [function_rule_named(f"{owner}.{n}") for n in source.string_literals] if owner in (
            "torch", "torch.nn.functional") else []
        named = [rule for rule in named if rule is not None and rule.runtime]
        return bool(named) and all(is_pointwise(rule) for rule in named)
    canonical = source.imports.resolve(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
    return canonical is not None and is_pointwise(function_rule_named(canonical))


def returns_elementwise_callable(source, call, caller=None, depth=0):
    """Whether `call` (a cst.Call of a function of the file) returns an elementwise callable or None, by every
    `return` of that function (see the module docstring). `caller`: the function (an `__init__`) the call is made in,
    whose `str`-annotated parameters are strings."""
    name = dotted_name(call.func)
    function = source.functions.get(name) if name else None
    if function is None or depth > MAX_DEPTH:
        return False
    returns = return_values(function.body)
    if not returns or all(_is_none(value) for value in returns):
        return False  # (a function returning nothing callable builds no activation)
    params = [p.name.value for p in function.params.params]
    for value in returns:
        if _is_none(value):
            continue
        if isinstance(value, cst.Name) and value.value in params:
            if not _string_argument(call, params.index(value.value), value.value, caller):
                return False
            continue
        if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name):
            table = module_level_table(source, value.value.value)
            if table is None or not all(is_elementwise_reference(source, v, depth + 1) for v in table):
                return False
            continue
        if isinstance(value, cst.Call):
            if not returns_elementwise_callable(source, value, function, depth + 1):
                return False
            continue
        if not is_elementwise_reference(source, value, depth + 1):
            return False
    return True


def _elementwise_function(source, name):
    """Whether the file's function `name` computes elementwise on its first argument (cached per source)."""
    cache = source.__dict__.setdefault("_elementwise_file_functions", {})
    if name not in cache:
        cache[name] = False  # (a function reaching itself is settled by its other calls)
        function = source.functions[name]
        params = function.params
        cache[name] = bool(params.params) and params.star_arg in (None, cst.MaybeSentinel.DEFAULT) and \
            elementwise_body(function.body, source.imports, source.functions, source.module)
    return cache[name]


def _is_none(value):
    return isinstance(value, cst.Name) and value.value == "None"


def _string_argument(call, index, name, caller):
    """Whether `call` hands a string to parameter `name` (position `index`): a string literal, or a parameter of
    `caller` annotated `str`."""
    argument = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
    positional = [a for a in call.args if a.keyword is None]
    if argument is None and index < len(positional) and not positional[index].star:
        argument = positional[index].value
    if isinstance(argument, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return True
    if not isinstance(argument, cst.Name) or caller is None:
        return False
    for param in caller.params.params:
        if param.name.value == argument.value:
            annotation = param.annotation.annotation if param.annotation is not None else None
            return isinstance(annotation, cst.Name) and annotation.value == "str"
    return False


