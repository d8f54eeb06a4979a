"""Copy the runtime definitions a port uses (and what they use) into the generated module.

Takes porter/runtime's definitions from `porter.runtime.runtime_index()` (read as text) and returns the source of
the dependency closure of the requested names, in a deterministic order that defines base classes first.
"""

import ast

from porter.runtime import runtime_index

STDLIB_MODULES = {"math", "contextlib", "collections", "functools", "itertools", "numbers", "typing", "copy",
                  "warnings", "dataclasses"}


def runtime_modules_used(text):
    """The imports a chunk of generated text needs (keras, np, tf, math, ...)."""
    import re

    imports = []
    for module in sorted(STDLIB_MODULES | {"keras"}):
        if re.search(rf"(?<![\w.]){module}\.", text):
            imports.append(f"import {module}")
    for module, alias in (("numpy", "np"), ("tensorflow", "tf")):
        if re.search(rf"(?<![\w.]){alias}\.", text):
            imports.append(f"import {module} as {alias}")
    return imports


def closure(names):
    """All runtime definitions needed by `names`, dependency-closed."""
    index = runtime_index()
    needed, stack = set(), [n for n in names if n in index]
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        stack.extend(u for u in index[name].uses if u in index and u not in needed)
    return needed


def bundle(names, renames=None):
    """Source text of the runtime definitions `names` need, in definition order (renamed where asked)."""
    index = runtime_index()
    needed = closure(names)
    chunks, seen = [], set()
    for definition in sorted((index[n] for n in needed), key=lambda d: d.order):
        if definition.source in seen:
            continue
        seen.add(definition.source)
        chunks.append(definition.source)
    text = "\n\n\n".join(chunks)
    return rename_globals(text, renames) if renames else text


def _rename_identifier(text, old, new):
    return rename_globals(text, {old: new})


def rename_globals(text, renames):
    """Rename module-level names in runtime source, leaving same-named locals, parameters and keywords alone."""
    tree = ast.parse(text)
    edits = []  # (line, column, old, new)

    def local_names(function):
        names = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
        return names

    def visit(node, shadowed):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in renames and not shadowed:
            keyword = "def " if isinstance(node, ast.FunctionDef) else "class "
            line = text.splitlines()[node.lineno - 1]
            column = line.index(keyword + node.name) + len(keyword)
            edits.append((node.lineno, column, node.name, renames[node.name]))
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            shadowed = shadowed | (local_names(node) & set(renames))
        if isinstance(node, ast.Name) and node.id in renames and node.id not in shadowed:
            edits.append((node.lineno, node.col_offset, node.id, renames[node.id]))
        for child in ast.iter_child_nodes(node):
            visit(child, shadowed)

    visit(tree, frozenset())
    lines = text.splitlines(keepends=True)
    for line, column, old, new in sorted(edits, reverse=True):
        source = lines[line - 1]
        if source[column:column + len(old)] == old:
            lines[line - 1] = source[:column] + new + source[column + len(old):]
    return "".join(lines)
