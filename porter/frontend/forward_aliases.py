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
    stars or keywords-only); `positions` gains the new nodes (the first binding's position). Else unchanged.
    A class that has a `forward` too and rebinds it in some branch (timm's FasterNet `MLPBlock`: `self.forward =
    self.forward_layer_scale` where a layer scale is built, `else: self.forward = self.forward`) has it renamed
    `forward_default`, bound first of all by its constructor, and is then such a class."""
    init = methods.get("__init__")
    if init is None:
        return methods
    if "forward" in methods:
        methods = _default_forward_renamed(methods, positions)
        if "forward" in methods:
            return methods
        init = methods["__init__"]
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


DEFAULT = "forward_default"


def _default_forward_renamed(methods, positions):
    """`methods` with `forward` renamed DEFAULT where `__init__` binds `self.forward` to methods of the class only
    (`self.forward` itself among them: the default); `__init__` binds DEFAULT first (after `super().__init__()`)
    and reads it where it read `self.forward`. Unchanged when it never binds `self.forward` or binds anything else."""
    init = methods["__init__"]
    bindings = [node for node in descendants(init) if isinstance(node, cst.Assign) and
                any(dotted_name(t.target) == "self.forward" for t in node.targets)]
    names = [dotted_name(node.value) for node in bindings]
    if not bindings or DEFAULT in methods or any(
            n is None or not n.startswith("self.") or n.count(".") != 1 or n[5:] not in methods for n in names):
        return methods
    new_init = init.visit(_DefaultBinding(positions, init))
    forward = methods["forward"]
    renamed = forward.with_changes(name=cst.Name(DEFAULT))
    for old, new in ((forward, renamed), (forward.name, renamed.name)):
        if old in positions:
            positions[new] = positions[old]
    return {**{k: v for k, v in methods.items() if k != "forward"}, "__init__": new_init, DEFAULT: renamed}


class _DefaultBinding(cst.CSTTransformer):
    """`self.forward` read in a constructor -> `self.forward_default`, and `self.forward = self.forward_default`
    bound after its `super().__init__()` (first, without one); each new node at its original's position."""

    def __init__(self, positions, constructor):
        super().__init__()
        self.positions, self.constructor = positions, constructor

    def on_leave(self, original, updated):
        updated = super().on_leave(original, updated)
        if isinstance(updated, cst.CSTNode) and updated is not original and original in self.positions:
            self.positions[updated] = self.positions[original]
        return updated

    def leave_Assign(self, original, updated):
        if dotted_name(original.value) == "self.forward":
            return updated.with_changes(value=cst.parse_expression(f"self.{DEFAULT}"))
        return updated

    def leave_FunctionDef(self, original, updated):
        if original is not self.constructor:
            return updated
        body = list(updated.body.body)
        at = next((i + 1 for i, statement in enumerate(body) if "super()" in cst.Module([]).code_for_node(statement)
                   and i < 3), 0)
        binding = cst.parse_statement(f"self.forward = self.{DEFAULT}\n")
        anchor = original.body.body[at - 1] if at else original
        if anchor in self.positions:
            for node in descendants(binding):
                self.positions[node] = self.positions[anchor]
            self.positions[binding] = self.positions[anchor]
        return updated.with_changes(body=updated.body.with_changes(body=body[:at] + [binding] + body[at:]))
