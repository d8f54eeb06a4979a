"""Which top-level names a module binds and which names a piece of code uses (shared by the source reader and
the linker)."""

import libcst as cst

from porter.frontend.walk import walk


def names_in(node):
    """Every plain name `node` mentions (reads, writes, attribute names alike)."""
    names = set()

    class Collector(cst.CSTVisitor):
        def visit_Name(self, name):
            names.add(name.value)

    walk(node, Collector())
    return names


def bound_names(statement):
    """Names a top-level statement binds: a `def`/`class` name, or plain assignment targets."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return [statement.name.value]
    return assigned_names(statement) if isinstance(statement, cst.SimpleStatementLine) else []


def assignment_targets(small):
    """The targets a small statement assigns: each of `A = B = ...`, the one of `x += ...` and `x: int = ...`; none
    for any other statement."""
    if isinstance(small, cst.Assign):
        return [t.target for t in small.targets]
    return [small.target] if isinstance(small, (cst.AugAssign, cst.AnnAssign)) else []


def assigned_names(statement):
    """Plain names a simple statement line assigns (`A = B = ...`, `x: int = ...`, `a, b = ...`)."""
    names = []
    for small in statement.body:
        targets = ([t.target for t in small.targets] if isinstance(small, cst.Assign) else
                   [small.target] if isinstance(small, cst.AnnAssign) else [])
        for target in targets:
            elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
            names.extend(e.value for e in elements if isinstance(e, cst.Name))
    return names


def mutated_names(statement):
    """Plain names whose item or attribute a simple statement line assigns (`SPEC['w18'] = [...]`, `CFG.depth = 3`):
    a table filled entry by entry after `SPEC = {}` (GluonCV's HRNET_SPEC)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return []
    names = []
    for small in statement.body:
        targets = ([t.target for t in small.targets] if isinstance(small, cst.Assign) else
                   [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else [])
        for target in targets:
            if isinstance(target, cst.Attribute) and target.attr.value.startswith("__"):
                continue  # `Outputs.__annotations__ = {...: Tensor}`: metadata for TorchScript, not model data
            if isinstance(target, (cst.Subscript, cst.Attribute)) and isinstance(target.value, cst.Name):
                names.append(target.value.value)
    return names


def top_level_bindings(module):
    """name -> the top-level statements that bind it: `def`, `class` and assignments to plain names, and the
    statements that then fill it in (mutated_names)."""
    bindings = {}
    for statement in module.body:
        for name in bound_names(statement) + mutated_names(statement):
            bindings.setdefault(name, []).append(statement)
    return bindings
