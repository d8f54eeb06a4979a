"""Module-level constants a factory's conditions read, as the module computes them when it is imported.

timm's vision_transformer.py: `_USE_NAFLEX_DEFAULT = os.environ.get('TIMM_USE_NAFLEXVIT', 'false').lower() ==
'true'`, read by `_create_vision_transformer`'s `if use_naflex:` (its other branch rebinds the keyword arguments, so
the factory reader could not follow any of the file's factories). A name the module binds once, at top level, to an
expression of literals is its value; an environment read (`os.environ.get(KEY, DEFAULT)`, `os.getenv(KEY,
DEFAULT)`) counts as its default: the port follows the factory as it runs with the variable unset.

A table of configurations (timm's maxxvit.py: `model_cfgs = dict(coatnet_pico_rw=MaxxVitCfg(...), ...)`, read by
`if variant in model_cfgs:` before `model_cfgs[cfg_variant]` is handed to the builder) has keys known from the
source even where its values are not: such a name (bound once to a dict display with string keys or `dict(...)` of
keywords, never filled in afterwards) is its keys (`KnownKeys`): membership and length are decided, an item read is
not.

`module_constants(module)` -> {name: value}.
"""

import ast

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.names import mutated_names, once_per_module
from porter.frontend.walk import descendants

_ENVIRONMENT_READS = frozenset({"os.environ.get", "os.getenv"})
# the builtins a constant may call: containers of literals (timm's levit.py: `model_cfgs = dict(levit_128=dict(
# embed_dim=(128, 256, 384), ...), ...)`)
_DISPLAYS = {"dict": dict, "tuple": tuple, "list": list, "set": set, "frozenset": frozenset}


def module_constants(module):
    """{name: value} of the module's names bound once, at top level, to a literal expression (see the docstring)."""
    return once_per_module(_read_constants, module)


class KnownKeys(frozenset):
    """The keys of a module-level table whose values porter does not compute: `key in table`, `len(table)`,
    `table.keys()` are decided; `table[key]` raises TypeError (undecided)."""

    def keys(self):
        return self


def _read_constants(module):
    bindings, found, filled = {}, {}, set()
    for statement in module.body:
        filled.update(mutated_names(statement) + _called_on(statement))
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                    isinstance(small.targets[0].target, cst.Name):
                name = small.targets[0].target.value
                bindings[name] = small.value if name not in bindings else None  # (bound twice: not a constant)
    for name, value in bindings.items():
        if value is None:
            continue
        if not _may_grow(value):
            code = cst.Module([]).code_for_node(value.visit(_EnvironmentDefaults()))
            try:  # (literals and displays only: no other builtin, no other name)
                found[name] = eval(compile(ast.parse(code, mode="eval"), "<constant>", "eval"),
                                   {"__builtins__": _DISPLAYS})
                continue
            except (ArithmeticError, AttributeError, LookupError, NameError, SyntaxError, TypeError, ValueError):
                pass  # (not computable from literals: no constant here)
        keys = _table_keys(value) if name not in filled else None
        if keys is not None:
            found[name] = KnownKeys(keys)
    return found


def _called_on(statement):
    """Names a top-level expression statement calls a method of (`model_cfgs.update(...)`: a table filled later)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return []
    return [small.value.func.value.value for small in statement.body if isinstance(small, cst.Expr) and
            isinstance(small.value, cst.Call) and isinstance(small.value.func, cst.Attribute) and
            isinstance(small.value.func.value, cst.Name)]


def _table_keys(value):
    """The keys of `{"a": ..., "b": ...}` or `dict(a=..., b=...)` whose values are not all literals (None for any
    other expression, and for a table of literals: that one is a constant)."""
    if isinstance(value, cst.Dict) and value.elements and all(
            isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) for e in value.elements):
        return [e.key.evaluated_value for e in value.elements]
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict" and \
            value.args and all(a.keyword is not None and not a.star for a in value.args):
        return [a.keyword.value for a in value.args]
    return None


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
