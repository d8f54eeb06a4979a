"""Top-level `if` statements whose test porter decides without running anything: the branch taken replaces the `if`.

`if hasattr(nn, 'SiLU'): Swish = nn.SiLU` / `else: class Swish(nn.Module): ...` (efficientnet_pytorch's utils.py)
binds a name the model classes use in one of two branches. Torch feature checks are decided as the forward's
`hasattr(F, "scaled_dot_product_attention")` is: by what the port supports (a rule covers `torch.nn.SiLU`). The
statements of the branch taken then stand at top level, where the class finder, the linker, the model-name walk and
the emitter see them like any other definition; the `if` itself is listed as not carried over.
"""

from dataclasses import dataclass

import libcst as cst


@dataclass(frozen=True)
class DecidedIf:
    """A top-level `if` decided statically: its test's source, the value taken, and the `if` node."""

    node: cst.If
    test: str
    taken: bool


def decided_body(module, resolve, covered):
    """(top-level statements with each decidable `if` replaced by the statements of the branch taken, [DecidedIf]).

    `resolve(node)`: the canonical name of an imported name (`nn` -> `torch.nn`) or None; `covered(canonical)`:
    whether a rule translates it."""
    body, decided = [], []
    for statement in module.body:
        body.extend(_taken_statements(statement, module, resolve, covered, decided))
    return body, decided


def decided_module(module, resolve, covered):
    """`module` with its decidable top-level `if`s replaced by the branch taken (the same node objects inside)."""
    body, decided = decided_body(module, resolve, covered)
    return module.with_changes(body=body) if decided else module


def _taken_statements(statement, module, resolve, covered, decided):
    if not isinstance(statement, cst.If):
        return [statement]
    value = static_truth(statement.test, resolve, covered)
    if value is None:
        return [statement]
    decided.append(DecidedIf(statement, module.code_for_node(statement.test), value))
    if value:
        branch = statement.body.body
    elif isinstance(statement.orelse, cst.If):  # `elif`: decided in turn (or kept as an `if` of its own)
        return _taken_statements(statement.orelse, module, resolve, covered, decided)
    else:
        branch = statement.orelse.body.body if statement.orelse is not None else ()
    taken = []
    for inner in branch:
        taken.extend(_taken_statements(inner, module, resolve, covered, decided))
    return taken


def static_truth(test, resolve, covered):
    """True/False for a test porter decides without running it, else None: `hasattr(<torch module>, "name")`
    (whether a rule covers that name), combined with `not`, `and`, `or`."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = static_truth(test.expression, resolve, covered)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left, right = static_truth(test.left, resolve, covered), static_truth(test.right, resolve, covered)
        if left is None or right is None:
            return None
        return (left and right) if isinstance(test.operator, cst.And) else (left or right)
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "hasattr" and \
            len(test.args) == 2 and isinstance(test.args[1].value, cst.SimpleString):
        return torch_has(resolve(test.args[0].value), test.args[1].value.evaluated_value, covered)
    return None


def torch_has(owner, attribute, covered):
    """`hasattr(owner, attribute)` for a torch module `owner` as the port sees it: whether a rule covers the name
    (None for owners that are not torch's)."""
    if owner is None or not (owner == "torch" or owner.startswith("torch.")):
        return None
    return covered(f"{owner}.{attribute}")
