"""The literal arguments a call binds to a function's parameters, carried through factory functions.

`pre_conv3x3_block(in_channels, out_channels, return_preact=True)` hands `return_preact` through the factory's
`**kwargs` to `PreConvBlock(kernel_size=3, stride=stride, padding=padding, **kwargs)`: the block built there has
`return_preact=True`, `kernel_size=3` and the factory's default `padding=1`. `call_literals` binds a call's
arguments to the function's parameters (keyword defaults included) and keeps the literal ones; `argument_literals`
reads a construction's arguments through those bindings, so the class's `call` is specialised for what each
instance is really built with (ModuleRef.static), however many factories it goes through.
"""

import ast
import keyword
from dataclasses import dataclass

import libcst as cst

from porter.frontend.arguments import parameter_of
from porter.frontend.walk import descendants

LITERALS = "#literals"  # env key: {parameter: literal text or None} of the function being scanned
FORWARDED = "**"  # prefix of a `**kwargs` parameter's entry: {keyword: literal text or None}, every keyword it holds


@dataclass(frozen=True)
class HandedFunction:
    """The static value of a constructor argument that names a module-level function of the file (MaxViT's
    `partition_function=window_partition`): an instance's `self.fn(x)` is a call of that function."""

    name: str


def static_value(text):
    """The value of a static argument's text: a literal, or a HandedFunction for a function's name."""
    if text.isidentifier() and not keyword.iskeyword(text):
        return HandedFunction(text)
    return ast.literal_eval(text)


def literal_text(code):
    """The canonical text of a Python literal made of ints, strings, booleans, lists and tuples (`[0, 2, 3, 1]`),
    or None for anything else."""
    try:
        value = ast.literal_eval(code)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None

    def plain(item):  # floats (eps, scales) never decide a layout, nor does None (an optional module): left out
        if isinstance(item, (list, tuple)):
            return all(plain(i) for i in item)
        return isinstance(item, (bool, int, str))

    return repr(value) if plain(value) else None


def argument_literals(call, names, code_of, literals):
    """({parameter: literal text or None} for what `call` hands parameters `names` (positional order), whether
    every argument is known) — a name bound in `literals` (the caller's own parameters) reads as its literal, and a
    `**kwargs` the caller forwards hands each keyword it holds. Not all known: a `*args`, or a `**mapping` whose
    keywords are not known."""
    handed, known = {}, True
    for position, arg in enumerate(call.args):
        if arg.star == "**" and isinstance(arg.value, cst.Name) and \
                isinstance(literals.get(FORWARDED + arg.value.value), dict):
            handed.update(literals[FORWARDED + arg.value.value])
            continue
        if arg.star:
            known = False
            continue
        name = parameter_of(arg, position, names)
        if name is not None:
            handed[name] = _literal_of(arg.value, code_of, literals)
    return handed, known


def call_literals(function, call, code_of, literals):
    """{parameter: literal text or None} for the parameters of `function` (a FunctionDef) that `call` binds, its
    keyword defaults included, and `**kwargs` -> {keyword: literal text or None} for the keywords it gathers;
    {} when the call hands a `*args` or an unknown `**mapping` (which parameters it fills is not known). A parameter
    the body assigns again is left out (its literal would not be what the body hands on)."""
    params = function.params
    names = [p.name.value for p in params.params]
    if names[:1] in (["self"], ["cls"]):
        names = names[1:]
    handed, known = argument_literals(call, names, code_of, literals)
    if not known:
        return {}
    named = set(names) | {p.name.value for p in params.kwonly_params}
    bound = {name: text for name, text in handed.items() if name in named}
    for param in (*params.params, *params.kwonly_params):
        if param.name.value in named and param.name.value not in handed and param.default is not None:
            bound[param.name.value] = _literal_of(param.default, code_of, {})
    if isinstance(params.star_kwarg, cst.Param):
        bound[FORWARDED + params.star_kwarg.name.value] = {name: text for name, text in handed.items()
                                                             if name not in named}
    elif any(name not in named for name in handed):
        return {}  # a keyword the function does not take: not a call porter reads right
    reassigned = _assigned_names(function)
    return {name: value for name, value in bound.items() if name.removeprefix(FORWARDED) not in reassigned}


def _literal_of(node, code_of, literals):
    if isinstance(node, cst.Name) and node.value in literals:
        return literals[node.value]
    return literal_text(code_of(node))


def _assigned_names(function):
    """Names the body of `function` binds or changes in place (`stride = 2`, `kwargs["bias"] = True`)."""
    names = set()
    for node in descendants(function.body):
        if isinstance(node, cst.AssignTarget | cst.AugAssign | cst.AnnAssign | cst.For | cst.NamedExpr):
            targets = [node.target]
            while targets:
                target = targets.pop()
                if isinstance(target, cst.Tuple | cst.List):
                    targets.extend(element.value for element in target.elements)
                    continue
                while isinstance(target, cst.Subscript | cst.Attribute | cst.StarredElement):
                    target = target.value
                if isinstance(target, cst.Name):
                    names.add(target.value)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                isinstance(node.func.value, cst.Name) and node.func.attr.value in ("update", "pop", "setdefault"):
            names.add(node.func.value.value)
    return names
