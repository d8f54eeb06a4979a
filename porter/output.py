"""Write an output tree safely: into a temporary directory first, then moved into place.

An existing non-empty OUT is refused unless `--force`; with `--force`, only files that porter's previous
manifest lists are replaced, so nothing the user added is lost. Ctrl-C leaves the old output or the new one.
"""

import json
import os
import shutil
import tempfile
from pathlib import Path

from porter.errors import UsageError

MANIFEST = "porter-manifest.json"


def previous_files(out):
    manifest = out / MANIFEST
    if not manifest.is_file():
        return None
    try:
        return set(json.loads(manifest.read_text()).get("files", []))
    except (ValueError, OSError):
        return None


def check_target(out, force):
    """Refuse to clobber: raise UsageError unless OUT is absent/empty or `force` applies."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a directory", hint="choose another -o")
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise UsageError(f"output directory {out} is not empty", hint="pass --force to replace porter's files")
        if previous_files(out) is None:
            raise UsageError(f"output directory {out} holds no porter-manifest.json; --force only replaces a "
                             "previous porter output", hint="choose an empty -o")


def write_tree(out, files, force=False):
    """Write `files` (relative path -> text or bytes) into `out` atomically per file set."""
    out = Path(out)
    check_target(out, force)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".porter-", dir=out.parent))
    try:
        for relative, content in sorted(files.items()):
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
        if not out.exists() or not any(out.iterdir()):
            if out.exists():
                out.rmdir()
            os.replace(staging, out)
            return
        old = previous_files(out) or set()
        for relative in sorted(old - set(files)):
            target = out / relative
            if target.is_file():
                target.unlink()
        for relative in sorted(files):
            target = out / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / relative, target)  # manifest last: sorted() puts it after the code
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
