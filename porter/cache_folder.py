"""A private per-user folder for caches of porter's own inputs (the runtime library's index): never the user's files.

`<temp dir>/porter-cache-<uid>`, made with mode 0700 and used only while it is a directory this user owns that no
one else may open (as Jinja checks its bytecode cache folder); None otherwise, and callers then compute what they
would have read. A cache changes no output.
"""

import functools
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
