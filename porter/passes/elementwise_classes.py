"""In-file module classes whose forward is elementwise: any layout in, the same layout out.

An activation chosen in `__init__` branches (`if act == "relu6": self.act = ReLU6() elif act == "hard_swish":
self.act = HardSwish() else: self.act = nn.Activation(act)`, GluonCV's MobileNetV3) is one of several modules; the
translator can follow such an attribute when every alternative passes its input's layout through. A layer rule
does when it is layout "any" and keeps the rank; an in-file class does when its forward only does arithmetic, calls
layout-"any" function rules that take no axis (`F.clip(x, 0, 6)`, `F.sigmoid`), applies an elementwise autograd
Function of the file (`SwishAutoFn.apply(x)`, elementwise_function.py) and calls its own attributes that
pass the layout through in turn (`x * self.act(x)`): its port is the same code whichever layout arrives.
"""

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.walk import walk
from porter.passes.elementwise_callables import is_elementwise_reference, returns_elementwise_callable
from porter.passes.elementwise_function import elementwise_function_named
from porter.rules.registry import is_pointwise, method_rule

MAX_DEPTH = 4


def is_elementwise_class(source, module_rules, function_rules, class_name, depth=0):
    """Whether in-file class `class_name`'s forward is elementwise (see the module docstring). Answered once per
    source file and class (the rules do not change during a conversion)."""
    cache = source.__dict__.setdefault("_elementwise_classes", {})
    key = (class_name, depth)
    if key not in cache:
        cache[key] = _is_elementwise_class(source, module_rules, function_rules, class_name, depth)
    return cache[key]


def _is_elementwise_class(source, module_rules, function_rules, class_name, depth):
    info = source.classes.get(class_name)
    if info is None or depth > MAX_DEPTH or info.bases:
        return False
    forward = info.find_method("forward")
    init = info.find_method("__init__")
    if forward is None:
        return False
    constructions = {}

    def attributes():
        if "found" not in constructions:
            constructions["found"] = attribute_constructions(init) if init is not None else {}
        return constructions["found"]

    params = [p.name.value for p in forward.params.params]
    if len(params) != 2 or forward.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or \
            forward.params.kwonly_params or forward.params.star_kwarg is not None:
        return False  # one tensor in

    def passes(value):
        if not isinstance(value, cst.Call):  # `self.act = F.relu`: a callable held, not a module built
            return is_elementwise_reference(source, value)
        if returns_elementwise_callable(source, value, init):  # `get_act_fn(act_type)`: a registry's function
            return True
        callee = value.func
        canonical = source.imports.resolve(callee)
        if canonical in module_rules:
            rule = module_rules[canonical]
            return rule.layout == "any" and rule.rank_delta == 0
        name = dotted_name(callee)
        return name in source.classes and is_elementwise_class(source, module_rules, function_rules, name,
                                                                depth + 1)

    class Checker(cst.CSTVisitor):
        def __init__(self):
            super().__init__()
            self.method_calls = set()  # `x.sigmoid` of `x.sigmoid()`: a method looked up as a Tensor rule

        def visit_Call(self, call):
            func = call.func
            name = dotted_name(func) or ""
            if name.startswith("self.") and name.count(".") == 1:
                callees = attributes().get(name[5:])
                if not callees or not all(passes(c) for c in callees):
                    raise _Decided
                return True
            if _applies_elementwise_function(source, func):
                self.method_calls.add(func)  # `SwishAutoFn.apply(x)`: timm's memory-efficient activations
                return True
            canonical = source.imports.resolve(func)
            rule = function_rules.get(canonical or "")
            if canonical is None and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) and \
                    is_pointwise(method_rule(func.attr.value)):
                self.method_calls.add(func)  # `self.act_fn(x).mul_(self.gamma)`: on a result checked in turn
                return True
            if canonical is None and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
                rule = function_rules.get(f"Tensor.{func.attr.value}")  # `x.sigmoid()` on a local tensor
                self.method_calls.add(func)
            if rule is None or rule.layout != "any" or rule.axis_params or rule.translate is not None or \
                    rule.outputs != "tensor":
                raise _Decided
            return True

        def visit_Subscript(self, node):
            raise _Decided

        def visit_Attribute(self, node):
            own = isinstance(node.value, cst.Name) and node.value.value == "self"
            if not own and node not in self.method_calls and (
                    dotted_name(node) is None or source.imports.resolve(node) is None):
                raise _Decided  # `x.shape`, `x.reshape(...)`
            return True

    try:
        walk(forward.body, Checker())  # reads only: no copy of the body made
    except _Decided:  # the first thing that is not elementwise ends the walk
        return False
    return True


def _applies_elementwise_function(source, func):
    """Whether `func` is `Name.apply` of an autograd Function the file defines that computes elementwise
    (elementwise_function.py)."""
    return isinstance(func, cst.Attribute) and func.attr.value == "apply" and isinstance(func.value, cst.Name) and \
        elementwise_function_named(source, func.value.value)


class _Decided(Exception):
    """Raised inside the forward walk once the class is known not to be elementwise."""


def attribute_constructions(init):
    """attribute -> [value] of each `self.<attribute> = value` in __init__ (`Callee(...)`, `F.relu`).
    Reads statements only (nested blocks too), not every expression node: a libcst visitor over each __init__
    was a tenth of a large file's conversion."""
    found = {}
    for node in _assignments(init.body):
        for target in node.targets:
            name = dotted_name(target.target)
            if name is not None and name.startswith("self.") and name.count(".") == 1:
                value = node.value
                found.setdefault(name[5:], []).append(value)
    return found


def every_construction(source, info, attribute, canonical_name, test):
    """Whether every assignment of `self.<attribute>` in `info`'s constructor calls `canonical_name` (`torch.nn.GRU`)
    with arguments `test(call)` accepts; answered once per (class, attribute, name, test) for the file."""
    init = info.find_method("__init__") if info is not None else None
    if init is None:
        return False
    cache = source.__dict__.setdefault("_every_construction", {})
    key = (info.name, attribute, canonical_name, test)
    if key not in cache:
        built = attribute_constructions(init).get(attribute, [])
        cache[key] = bool(built) and all(
            isinstance(node, cst.Call) and source.imports.resolve(node.func) == canonical_name and test(node)
            for node in built)
    return cache[key]


def _assignments(suite):
    """Every `cst.Assign` among the statements of `suite` and of the blocks nested in them, in source order."""
    if isinstance(suite, cst.SimpleStatementSuite):  # `if c: self.a = A()`
        yield from (small for small in suite.body if isinstance(small, cst.Assign))
        return
    for statement in getattr(suite, "body", ()):
        if isinstance(statement, cst.SimpleStatementLine):
            yield from (small for small in statement.body if isinstance(small, cst.Assign))
        else:
            yield from _nested_assignments(statement)


def _nested_assignments(statement):
    """The assignments in a compound statement's blocks: body, elif/else, except handlers, finally."""
    if isinstance(getattr(statement, "body", None), cst.BaseSuite):
        yield from _assignments(statement.body)
    orelse = getattr(statement, "orelse", None)
    if isinstance(orelse, cst.If):
        yield from _nested_assignments(orelse)
    elif orelse is not None:
        yield from _assignments(orelse.body)
    for handler in getattr(statement, "handlers", ()):
        yield from _assignments(handler.body)
    final = getattr(statement, "finalbody", None)
    if final is not None:
        yield from _assignments(final.body)
