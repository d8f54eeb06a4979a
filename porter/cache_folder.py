"""A private per-user folder for caches of porter's own inputs (the runtime library's index): never the user's files.

`<temp dir>/porter-cache-<uid>`, made with mode 0700 and used only while it is a directory this user owns that no
one else may open (as Jinja checks its bytecode cache folder); None otherwise, and callers then compute what they
would have read. A cache changes no output.
"""

import contextlib
import functools
import glob
import hashlib
import marshal
import os
import stat
import tempfile


@functools.lru_cache(maxsize=1)
def cache_folder():
    """The folder's path, or None where no safe one can be made (another user's folder, no uid, no room)."""
    if not hasattr(os, "getuid"):
        return None
    folder = os.path.join(tempfile.gettempdir(), f"porter-cache-{os.getuid()}")
    try:
        os.mkdir(folder, stat.S_IRWXU)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        status = os.lstat(folder)
    except OSError:
        return None
    if status.st_uid != os.getuid() or not stat.S_ISDIR(status.st_mode) or stat.S_IMODE(status.st_mode) != \
            stat.S_IRWXU:
        return None
    return folder


def read_cached(kind, key):
    """The value `write_cached(kind, key, ...)` stored, or None (no folder, no entry, a damaged file)."""
    folder = cache_folder()
    if folder is None:
        return None
    try:
        with open(os.path.join(folder, f"{kind}-{key}.marshal"), "rb") as file:
            return marshal.load(file)
    except (OSError, ValueError, EOFError, TypeError):
        return None


def write_cached(kind, key, value):
    """Keep `value` (marshal-able) under `kind` and `key`; the entries of `kind` under other keys (computed from
    inputs since edited) are removed. `kind` names what one porter installation computes: two checkouts of porter
    on one machine keep theirs side by side rather than replacing each other's on every run."""
    folder = cache_folder()
    if folder is None:
        return
    path = os.path.join(folder, f"{kind}-{key}.marshal")
    partial = f"{path}.{os.getpid()}.tmp"
    try:
        with open(partial, "wb") as file:
            marshal.dump(value, file)
        os.replace(partial, path)  # whole or absent: a concurrent run never reads half a file
        for stale in glob.glob(os.path.join(glob.escape(folder), f"{glob.escape(kind)}-*.marshal")):
            if stale != path and "-" not in os.path.basename(stale)[len(kind) + 1:-len(".marshal")]:
                os.unlink(stale)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(partial)


def installation_kind(name, folder):
    """A cache kind for `name` computed from the files of `folder` (one per porter checkout)."""
    return f"{name}-{hashlib.sha256(str(folder).encode()).hexdigest()[:12]}"
