"""Module-level functions a file hands to its own classes and functions as values.

`Unit(c, shuffle)` or `net(shuffle)` hands the function `shuffle` to a block that keeps it (`self.shuffle = shuffle`)
and calls it (`self.shuffle(y, 4)`); porter cannot tell at that call which function the attribute holds, so it runs
it through `call_module`, which hands it an image in torch's layout. Such a function must be translated for torch's
layout under its own name (passes/classes.py), its direct callers taking a variant for theirs. Only arguments of
calls of the file's own classes and functions and values kept on `self` count: a decorator, a table of activation
functions or a registry call reads a function as a value without calling it on a tensor porter lays out.
"""

import libcst as cst

from porter.frontend.names import target_names


def handed_functions(source):
    """Names of `source`'s model functions handed as an argument to a call of one of the file's classes or
    functions, assigned to an attribute of `self`, or a parameter's default (read once per source)."""
    found = source.__dict__.get("_handed_functions")
    if found is None:
        found = source.__dict__["_handed_functions"] = _handed_functions(source)
    return found


def _handed_functions(source):
    functions = set(source.model_functions())
    if not functions:
        return frozenset()
    own = set(source.classes) | set(source.functions)
    found = set()
    for call in source.nodes_in(source.module, cst.Call):
        if isinstance(call.func, cst.Name) and call.func.value in own:
            names = {arg.value.value for arg in call.args
                     if isinstance(arg.value, cst.Name) and arg.value.value in functions} - found
            found.update(names - _local_names(source, call) if names else names)
    for assign in source.nodes_in(source.module, cst.Assign):
        if isinstance(assign.value, cst.Name) and assign.value.value in functions and any(
                isinstance(t.target, cst.Attribute) and isinstance(t.target.value, cst.Name) and
                t.target.value.value == "self" for t in assign.targets):
            found.add(assign.value.value)
    for param in source.nodes_in(source.module, cst.Param):
        if isinstance(param.default, cst.Name) and param.default.value in functions:
            found.add(param.default.value)  # MaxViT's `def __init__(self, ..., partition_function=window_partition)`
    return frozenset(found)


def _local_names(source, node):
    """Names the functions enclosing `node` bind themselves (parameters, assignments, loop targets): timm's
    `_num_groups(num_channels, num_groups, group_size)` hands its parameter `num_groups`, not the module-level
    function of that name (asked only of a call handing a name a model function has)."""
    line = source.line_of(node)
    names = set()
    if line is None:
        return names
    for definition in source.nodes_in(source.module, cst.FunctionDef, cst.Lambda):
        position = source.positions.get(definition)
        if position is None or not position.start.line <= line <= position.end.line:
            continue
        if isinstance(definition, cst.Lambda):
            names.update(param.name.value for param in (*definition.params.params, *definition.params.kwonly_params))
            continue
        names.update(param.name.value for param in source.nodes_in(definition, cst.Param))
        for target in source.nodes_in(definition, cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For,
                                      cst.AsName):
            value = getattr(target, "target", None) or getattr(target, "name", None)
            names.update(target_names(value))
    return names
