"""A class whose constructor chooses its forward among its own methods (timm's FasterNet `Partial_conv3`:
`self.forward = self.forward_slicing` or `= self.forward_split_cat` by a constructor argument, and no `def forward`):
the translator reads a `forward` that calls `self.forward(...)`, which the method-alias pass translates as a call of
those methods (passes/method_aliases.py). Without it the port's `call` raised "has no forward in the source".
"""

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.walk import descendants


def with_forward_from_aliases(methods, positions):
    """`methods` (name -> cst.FunctionDef of one class) with a `forward` made for a class that has none and whose
    `__init__` binds `self.forward` only to its own methods, all taking the same parameters (without defaults,
    stars or keywords-only); `positions` gains the new nodes (the first binding's position). Else unchanged."""
    init = methods.get("__init__")
    if "forward" in methods or init is None:
        return methods
    bindings = [node for node in descendants(init) if isinstance(node, cst.Assign) and
                any(dotted_name(t.target) == "self.forward" for t in node.targets)]
    chosen = [_method_named(node.value, methods) for node in bindings]
    if not bindings or None in chosen:
        return methods
    parameters = [_plain_parameters(methods[name]) for name in chosen]
    if parameters[0] is None or any(p != parameters[0] for p in parameters):
        return methods
    arguments = ", ".join(parameters[0][1:])
    forward = cst.parse_statement(f"def forward({', '.join(parameters[0])}):\n    return self.forward({arguments})\n")
    position = positions.get(bindings[0])
    if position is not None:
        for node in descendants(forward):
            positions[node] = position
    return {**methods, "forward": forward}


def _method_named(value, methods):
    """The method `self.<name>` names when it is one of `methods`, else None."""
    name = dotted_name(value)
    if name is None or not name.startswith("self.") or name.count(".") != 1:
        return None
    return name[5:] if name[5:] in methods and name[5:] != "forward" else None


def _plain_parameters(function):
    """The parameter names of `function` when they are all plain (no default, star or keyword-only), else None."""
    params = function.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None or params.kwonly_params or \
            params.posonly_params or any(p.default is not None for p in params.params):
        return None
    return [p.name.value for p in params.params]
