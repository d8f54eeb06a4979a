"""A source file of a package (`from .layers import *`) imported as part of its package.

Loaded by path alone, its relative imports fail ("attempted relative import with no known parent package"). Then it
is imported by its dotted name, with the folder above its top package on sys.path; a file of a source root (the
manifest's `source_root`) is imported with that folder on sys.path. `porter verify` uses it, and the
test_equivalence.py of a package port carries `import_path` below (stdlib only) in place of the harness's.
"""

import importlib
import sys
from pathlib import Path


def import_in_package(path):
    """Import `path` by its dotted name inside its package (folders with `__init__.py`)."""
    path = Path(path).resolve()
    parts, folder = ([] if path.stem == "__init__" else [path.stem]), path.parent
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.insert(0, folder.name)
        folder = folder.parent
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(".".join(parts))


def with_package_fallback(by_path, roots=()):
    """`by_path` (the harness's `import_path`), falling back to `import_in_package` for a file of a package, and,
    for a file of a source root (a folder without `__init__.py` whose modules import each other absolutely:
    `from models.common import Conv`), to `by_path` again with the folders `roots` on sys.path."""

    def import_path(path, *args, **kwargs):
        try:
            return by_path(path, *args, **kwargs)
        except ImportError as error:
            if "relative import" in str(error):
                return import_in_package(path)
            if not roots or not isinstance(error, ModuleNotFoundError):
                raise
        for root in roots:
            if str(root) not in sys.path:
                sys.path.insert(0, str(root))
        return by_path(path, *args, **kwargs)

    return import_path
