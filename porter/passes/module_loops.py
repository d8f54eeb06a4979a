"""Loops and list arithmetic over the modules an `__init__` builds: what a `for` over a list or dict of layers
binds on each turn (`for key in layer_dict.keys(): seq.add(layer_dict[key])`), and the lists `+` and slices make
(`layers[0:2] + [("dropout", dropout())] + layers[2:]`).

Used by the module resolver (modules.py) to run such a loop once per known layer, so the container it fills keeps
its children, in order, instead of becoming unknown (converted at run time).
"""

from dataclasses import dataclass

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.walk import has_escape
from porter.ir.values import UNKNOWN_MODULE, ModuleRef

# loops longer than this are not run turn by turn (their blocks repeat: the container's kinds are what matters)
MOST_TURNS = 64


@dataclass(frozen=True)
class DictKey:
    """The key a loop over the local dict (or list of `(name, module)` pairs) `holder` binds on its turn `index`:
    `holder[key]` is that turn's module."""

    holder: str
    index: int


def loop_turns(statement, iterated_items):
    """([{name: value bound on that turn}], ordered) for `for ... in ...` over a list or dict of modules the scan
    followed (`layers`, `layer_dict.keys()`, `.values()`, `.items()`, `enumerate(...)` of one of those), or None
    when porter cannot tell what each turn binds. `iterated_items(node)`: (modules, is a dict, in known order) for
    the expression iterated (`layer_dict`, `OrderedDict(blocks)`), or None. `ordered`: whether the turns run in a
    known order."""
    if statement.orelse is not None or has_escape(statement.body):
        return None
    target, iterated, counted = statement.target, statement.iter, False
    if _is_call(iterated, "enumerate") and len(iterated.args) == 1:
        iterated, counted = iterated.args[0].value, True
    method = None
    if isinstance(iterated, cst.Call) and not iterated.args and isinstance(iterated.func, cst.Attribute) and \
            iterated.func.attr.value in ("keys", "values", "items"):
        method, iterated = iterated.func.attr.value, iterated.func.value
    found = iterated_items(iterated)
    if found is None or len(found[0]) > MOST_TURNS:
        return None
    items, is_dict, ordered = found
    if method is None:
        method = "keys" if is_dict else "list"
    elif not is_dict:
        return None  # `.keys()` of a list porter took for one: not followed
    holder = dotted_name(iterated)  # (`OrderedDict(blocks)[key]` is never read back: no holder for its keys)
    turns = []
    for index, item in enumerate(items):
        key = DictKey(holder, index) if holder is not None else UNKNOWN_MODULE
        value = {"keys": key, "values": item, "list": item, "items": ModuleRef("list", elements=(key, item))}[method]
        if counted:
            value = ModuleRef("list", elements=(UNKNOWN_MODULE, value))
        bound = _bind(target, value)
        if bound is None:
            return None
        turns.append(bound)
    return turns, ordered


def dict_item(node, env):
    """The module `layer_dict[key]` reads, `key` being what a loop over `layer_dict` bound; else None."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1 and
            isinstance(node.slice[0].slice, cst.Index) and isinstance(node.slice[0].slice.value, cst.Name)):
        return None
    key, items = env.get(node.slice[0].slice.value.value), env.get(node.value.value)
    if isinstance(key, DictKey) and key.holder == node.value.value and isinstance(items, list) and \
            key.index < len(items):
        return items[key.index]
    return None


def list_expression(node, env, ref_of):
    """The modules of a list expression built from known lists: `a + b`, `layers[0:2]`, a literal, a local list;
    None for anything else. `ref_of(node)`: the module an element expression stands for."""
    if isinstance(node, (cst.List, cst.Tuple)) and not any(isinstance(e, cst.StarredElement) for e in node.elements):
        return [ref_of(element.value) for element in node.elements]
    if isinstance(node, cst.Name):
        found = env.get(node.value)
        return list(found) if isinstance(found, list) and node.value not in env.get("#unordered", ()) else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        left = list_expression(node.left, env, ref_of)
        right = list_expression(node.right, env, ref_of) if left is not None else None
        return None if right is None else left + right
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
        items = list_expression(node.value, env, ref_of)
        bounds = [literal_int(getattr(node.slice[0].slice, part)) for part in ("lower", "upper", "step")]
        if items is None or any(b is False for b in bounds):
            return None
        return items[slice(*bounds)]
    return None


def literal_int(node):
    """A slice bound's integer literal value (`2`, `-1`), None for no bound, False for anything else."""
    if node is None:
        return None
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and \
            isinstance(node.expression, cst.Integer):
        return -int(node.expression.value)
    return False


def _bind(target, value):
    """{name: value} for a loop target taking `value` on one turn (a pair unpacked into `name, layer`); None when
    the target's shape does not match the value."""
    if isinstance(target, cst.Name):
        return {target.value: value}
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, ModuleRef) and value.kind == "list" and \
            len(value.elements) == len(target.elements):
        bound = {}
        for element, item in zip(target.elements, value.elements):
            inner = _bind(element.value, item)
            if inner is None:
                return None
            bound.update(inner)
        return bound
    return None


def _is_call(node, name):
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == name
