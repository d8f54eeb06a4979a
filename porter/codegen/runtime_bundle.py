"""Copy the runtime definitions a port uses (and what they use) into the generated module.

Reads porter/runtime/*.py as text (ast), indexes top-level definitions by name, and returns the source of the
dependency closure of the requested names, in a deterministic order that defines base classes first.
"""

import ast
import functools
from pathlib import Path

RUNTIME_DIR = Path(__file__).resolve().parents[1] / "runtime"
MODULE_ORDER = ("base", "module", "helpers")  # modules whose definitions others build on come first
STDLIB_MODULES = {"math", "contextlib", "collections", "functools", "itertools", "numbers", "typing", "copy",
                  "warnings", "dataclasses"}


class Definition:
    def __init__(self, name, module, order, source, uses):
        self.name, self.module, self.order, self.source, self.uses = name, module, order, source, uses


@functools.lru_cache(maxsize=1)
def runtime_index():
    """name -> Definition for every top-level def/class/constant in porter/runtime."""
    index = {}
    files = sorted(RUNTIME_DIR.glob("*.py"), key=lambda p: (
        MODULE_ORDER.index(p.stem) if p.stem in MODULE_ORDER else len(MODULE_ORDER), p.stem))
    for rank, path in enumerate(files):
        if path.stem == "__init__":
            continue
        text = path.read_text()
        tree = ast.parse(text)
        for position, node in enumerate(tree.body):
            names = _defined_names(node)
            if not names:
                continue
            segment = ast.get_source_segment(text, node, padded=False)
            decorators = "".join(f"@{ast.get_source_segment(text, d)}\n" for d in getattr(node, "decorator_list", []))
            uses = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            uses |= {n.value.id for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(
                n.value, ast.Name)}
            for name in names:
                index[name] = Definition(name, path.stem, (rank, position), decorators + segment, uses - {name})
    return index


def _defined_names(node):
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    return []


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
    for old, new in sorted((renames or {}).items()):
        text = _rename_identifier(text, old, new)
    return text


def _rename_identifier(text, old, new):
    import re

    return re.sub(rf"(?<![\w.]){re.escape(old)}(?!\w)", new, text)
