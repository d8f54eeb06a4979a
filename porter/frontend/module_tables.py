"""Dict tables a file binds at its top level (`BLOCKS = {"basic": BasicBlock}`, `_ACT_FNS = dict(relu=F.relu)`): the
values a subscript of one may stand for, read from the source once."""

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.names import assignment_targets


def module_level_table(source, name):
    """The values of the module-level dict `name` (`NAME = dict(a=x, b=y)` or `NAME = {"a": x}`, bound once at top
    level and never subscript-assigned there), as cst expressions; None otherwise (cached per source)."""
    cache = source.__dict__.setdefault("_module_level_tables", {})
    if name not in cache:
        cache[name] = _table_values(source.module, name)
    return cache[name]


def _table_values(module, name):
    found = []
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            for target in assignment_targets(small):
                if isinstance(target, cst.Name) and target.value == name:
                    found.append(small.value if isinstance(small, cst.Assign) else None)
                elif isinstance(target, cst.Subscript) and dotted_name(target.value) == name:
                    return None  # `NAME["x"] = f`: grown where porter does not follow it
    if len(found) != 1 or found[0] is None:
        return None
    value = found[0]
    if isinstance(value, cst.Dict):
        if not all(isinstance(e, cst.DictElement) for e in value.elements):
            return None
        return [e.value for e in value.elements]
    if isinstance(value, cst.Call) and dotted_name(value.func) == "dict" and \
            all(a.keyword is not None for a in value.args):
        return [a.value for a in value.args]
    return None
