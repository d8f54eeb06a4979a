"""Forward parameters with a literal default that no call in the file can hand: every call leaves the default.

`def forward(self, x, return_map=False)` with `if return_map: return x * a, a` and `return x * a` (a non-local
block's `return_nl_map`, DINO's `return_attention`): the two returns disagree (a tuple, a tensor), so the class
returned torch's layout and each caller converted back, two Transposes a block. Where no call in the file can hand
the parameter, the forward is translated with it holding its default (a static Python value): the branch it never
takes is still written out, translated as a dead branch (passes/statements.py `in_branch`), so it decides no layout.

A call can hand it where any call in the file names it by keyword, or where a call whose callee could be an instance
of the class hands that many positional arguments or spreads `*args`/`**kwargs`. A callee that cannot be one: a
name the file defines as another class or a function, an imported or torch name, a method of a value other than
`forward`, `self.<attribute>` every construction of which (in any class of the file) builds another class or a torch
layer. The main class (which the user calls), a class other files import and one the file names other than by
calling it (`block=Gate`, a base class) decide nothing.
"""

import ast
import builtins

import libcst as cst

from porter.passes.elementwise_classes import attribute_constructions
from porter.passes.rank_inference import declared_params

_LITERALS = (bool, int, float, str, type(None))


def unhanded_defaults(source, info, main_class):
    """{parameter: its literal default} of `info`'s forward parameters that no call in the file can hand (see the
    module docstring); {} when none can be told."""
    cache = source.__dict__.setdefault("_unhanded_forward_defaults", {})
    if info.name not in cache:
        cache[info.name] = _unhanded(source, info, main_class)
    return cache[info.name]


def _unhanded(source, info, main_class):
    forward = info.find_method("forward")
    if forward is None or info.name == main_class or info.name in source.exported or \
            info.name in source.names_not_called or any(info.name in other.bases
                                                         for other in source.classes.values()):
        return {}
    params = [p for p in declared_params(forward) if p.name.value != "self"]
    defaults = {}
    for param in params:
        value = _literal(source.code_of(param.default)) if param.default is not None and param.star not in (
            "*", "**") else None
        if value is not None:
            defaults[param.name.value] = value[0]
    if not defaults:
        return {}
    positions = {p.name.value: position for position, p in enumerate(params)}
    others = _other_class_attributes(source, info.name)
    for call in source.nodes_in(source.module, cst.Call):
        for arg in call.args:
            if arg.keyword is not None:
                defaults.pop(arg.keyword.value, None)
        if defaults and _may_call_an_instance(source, call.func, info.name, others):
            if any(arg.star for arg in call.args):
                return {}
            handed = sum(1 for arg in call.args if arg.keyword is None)
            for name in [n for n in defaults if positions[n] < handed]:
                del defaults[name]
        if not defaults:
            return {}
    return defaults


def _literal(text):
    """(value,) of a literal default's source text (`False`, `None`, `0.5`, `"mean"`), else None."""
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return None
    return (value,) if isinstance(value, _LITERALS) else None


def _other_class_attributes(source, class_name):
    """Attribute names every construction of which, in every class of the file, builds something other than
    `class_name` by a call porter can name (another class of the file, a torch layer)."""
    return frozenset(attribute for attribute, values in _attribute_constructions(source).items() if all(
        isinstance(v, cst.Call) and _names_another(source, v.func, class_name) for v in values))


def _attribute_constructions(source):
    """attribute -> every value a `self.<attribute> = ...` of any class's __init__ in the file assigns (read once
    per file)."""
    if "_attribute_constructions_of_file" not in source.__dict__:
        built = {}
        for info in source.classes.values():
            init = info.methods.get("__init__")
            for attribute, values in (attribute_constructions(init) if init is not None else {}).items():
                built.setdefault(attribute, []).extend(values)
        source.__dict__["_attribute_constructions_of_file"] = built
    return source.__dict__["_attribute_constructions_of_file"]


def _names_another(source, func, class_name):
    """Whether the callee expression `func` names a class or function other than `class_name` (of the file, or
    imported: torch's layers)."""
    if isinstance(func, cst.Name):
        return func.value != class_name and (func.value in source.classes or source.imports.resolve(func) is
                                             not None or func.value in source.functions)
    return isinstance(func, cst.Attribute) and source.imports.resolve(func) is not None


def _may_call_an_instance(source, func, class_name, others):
    """Whether a call of `func` may call an instance of `class_name` (its forward)."""
    if isinstance(func, cst.Name):
        return not (func.value in source.classes or func.value in source.functions or
                    source.imports.resolve(func) is not None or hasattr(builtins, func.value))
    if isinstance(func, cst.Attribute):
        if isinstance(func.value, cst.Name) and func.value.value == "self" and func.attr.value != "forward":
            return func.attr.value not in others and not any(
                func.attr.value in info.methods for info in source.classes.values())
        if source.imports.resolve(func) is not None:
            return False
        return func.attr.value == "forward"
    return True  # (`self.blocks[i](x, flag)`, a call's result called)

