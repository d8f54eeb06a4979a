"""Runtime library copied into generated model modules: Keras layers and functions with torch semantics.

This package file itself is not runtime: `runtime_index()` reads the runtime modules beside it as text (ast, no
import, so no TensorFlow) and indexes their top-level definitions by name for the code generator and the passes.
"""

import ast
import functools
import hashlib
import symtable
from pathlib import Path

RUNTIME_DIR = Path(__file__).resolve().parent
MODULE_ORDER = ("base", "module", "helpers")  # modules whose definitions others build on come first


class Definition:
    """One top-level runtime definition: its source text and the global names it refers to."""

    def __init__(self, name, module, order, source, filename):
        self.name, self.module, self.order, self.source, self.filename = name, module, order, source, filename

    @functools.cached_property
    def uses(self):
        """The global names it refers to, found when first asked: a conversion bundles a few of the hundreds of
        definitions, and reading every one's symbol table was most of indexing the runtime."""
        return global_references(self.source, self.filename) - {self.name}


@functools.lru_cache(maxsize=1)
def runtime_index():
    """name -> Definition for every top-level def/class/constant in porter/runtime."""
    files = sorted(RUNTIME_DIR.glob("*.py"), key=lambda p: (
        MODULE_ORDER.index(p.stem) if p.stem in MODULE_ORDER else len(MODULE_ORDER), p.stem))
    texts = [(rank, path, path.read_text()) for rank, path in enumerate(files) if path.stem != "__init__"]
    key = hashlib.sha256(repr([(rank, str(path), text) for rank, path, text in texts]).encode()).hexdigest()[:32]
    entries = _cached_entries(key)
    if entries is None:
        entries = _index_entries(texts)
        _store_entries(key, entries)
    return {name: Definition(name, module, (rank, position), source, filename)
            for name, module, rank, position, source, filename in entries}


def _index_entries(texts):
    """[(name, module, rank, position, source, filename)] of the top-level definitions of the runtime modules."""
    entries = []
    for rank, path, text in texts:
        tree = ast.parse(text)
        lines = text.splitlines(keepends=True)
        for position, node in enumerate(tree.body):
            names = _defined_names(node)
            if not names:
                continue
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            segment = "".join(lines[start - 1:node.end_lineno]).rstrip("\n")  # whole lines: O(size) overall
            entries.extend((name, path.stem, rank, position, segment, str(path)) for name in names)
    return entries


# Parsing the ~9,400 runtime lines was a tenth of converting a 3,500-line file, the same work every run: the
# entries are kept in porter's cache folder under a hash of the runtime files' paths and text.
def _cached_entries(key):
    from porter.cache_folder import installation_kind, read_cached

    entries = read_cached(installation_kind("runtime-index", RUNTIME_DIR), key)
    valid = isinstance(entries, list) and all(isinstance(e, tuple) and len(e) == 6 for e in entries)
    return entries if valid else None


def _store_entries(key, entries):
    from porter.cache_folder import installation_kind, write_cached

    write_cached(installation_kind("runtime-index", RUNTIME_DIR), key, entries)


def global_references(text, filename="<generated>"):
    """The global names `text` (a module or top-level statements) reads, at module level or inside its functions
    and classes; parameters, locals and names of enclosing functions are not global."""
    return table_global_references(symtable.symtable(text, filename, "exec"))


def table_global_references(table):
    """global_references of a module's symbol table (for a caller that reads the table for more)."""
    found = set()
    tables = [table]
    while tables:
        table = tables.pop()
        found.update(s.get_name() for s in table.get_symbols() if s.is_global() and s.is_referenced())
        if table.get_type() == "class":  # `mask = staticmethod(mask)` in a class body reads the global `mask`
            found.update(s.get_name() for s in table.get_symbols() if s.is_local() and s.is_referenced())
        tables.extend(table.get_children())
    return found


def _defined_names(node):
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    return []
