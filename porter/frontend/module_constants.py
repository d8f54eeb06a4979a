"""Module-level constants a factory's conditions read, as the module computes them when it is imported.

timm's vision_transformer.py: `_USE_NAFLEX_DEFAULT = os.environ.get('TIMM_USE_NAFLEXVIT', 'false').lower() ==
'true'`, read by `_create_vision_transformer`'s `if use_naflex:` (its other branch rebinds the keyword arguments, so
the factory reader could not follow any of the file's factories). A name the module binds once, at top level, to an
expression of literals is its value; an environment read (`os.environ.get(KEY, DEFAULT)`, `os.getenv(KEY,
DEFAULT)`) counts as its default: the port follows the factory as it runs with the variable unset.

`module_constants(module)` -> {name: value}.
"""

import ast

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.names import once_per_module
from porter.frontend.walk import descendants

_ENVIRONMENT_READS = frozenset({"os.environ.get", "os.getenv"})


def module_constants(module):
    """{name: value} of the module's names bound once, at top level, to a literal expression (see the docstring)."""
    return once_per_module(_read_constants, module)


def _read_constants(module):
    bindings, found = {}, {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                    isinstance(small.targets[0].target, cst.Name):
                name = small.targets[0].target.value
                bindings[name] = small.value if name not in bindings else None  # (bound twice: not a constant)
    for name, value in bindings.items():
        if value is None or _may_grow(value):
            continue
        code = cst.Module([]).code_for_node(value.visit(_EnvironmentDefaults()))
        try:  # (literals only: no builtins, no other name)
            found[name] = eval(compile(ast.parse(code, mode="eval"), "<constant>", "eval"), {"__builtins__": {}})
        except (ArithmeticError, AttributeError, LookupError, NameError, SyntaxError, TypeError, ValueError):
            pass  # (not computable from literals: no constant here)
    return found


def _may_grow(value):
    """Whether `value` repeats or raises something (`"-" * 80`, `2 ** n`): not evaluated (it could be huge)."""
    return any(isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Power,
                                                                                     cst.LeftShift))
               for node in descendants(value))


class _EnvironmentDefaults(cst.CSTTransformer):
    """`os.environ.get(KEY, DEFAULT)` -> DEFAULT (None without one)."""

    def leave_Call(self, original, updated):
        if dotted_name(original.func) not in _ENVIRONMENT_READS or not 1 <= len(original.args) <= 2:
            return updated
        return updated.args[1].value if len(updated.args) == 2 else cst.Name("None")
