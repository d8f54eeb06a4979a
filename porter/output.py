"""Write an output tree safely: into a temporary directory first, then moved into place.

An existing non-empty OUT is refused unless `--force`; with `--force`, only files that porter's previous
manifest lists are replaced, so nothing the user added is lost. The commit step moves the old files aside
before moving the new ones in: an error rolls it back, and Ctrl-C during it is held until it has finished,
so OUT holds the old output or the new one, never a mix.
"""

import contextlib
import json
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path, PurePosixPath

from porter.errors import OutputError, UsageError

MANIFEST = "porter-manifest.json"


def listed_files(names):
    """The manifest's `files` list: one canonical order however the output was produced (sorted, manifest last)."""
    return sorted(set(names) - {MANIFEST}) + [MANIFEST]


def manifest_text(manifest):
    """porter-manifest.json's text: the one serialisation `convert`, `convert --weights` and `diff` share."""
    return json.dumps(manifest, indent=2) + "\n"


def safe_relative(relative):
    """True for a plain relative POSIX path that stays inside OUT (no absolute paths, no `..`, no drive)."""
    if not isinstance(relative, str) or not relative or "\\" in relative or "\x00" in relative:
        return False
    path = PurePosixPath(relative)
    return not path.is_absolute() and ".." not in path.parts and ":" not in path.parts[0]


def previous_files(out):
    """Files the previous porter manifest in `out` lists (only safe relative paths), or None without one."""
    manifest = out / MANIFEST
    if not manifest.is_file():
        return None
    try:
        listed = json.loads(manifest.read_text(encoding="utf-8")).get("files", [])
    except (ValueError, OSError, AttributeError):
        return None
    if not isinstance(listed, list):
        return None
    return {relative for relative in listed if safe_relative(relative) and _inside(out, relative)} | {MANIFEST}


def _inside(out, relative):
    """`out/relative` does not escape `out` through symbolic links."""
    try:
        base = out.resolve()
        return (out / relative).resolve().is_relative_to(base)
    except (OSError, RuntimeError):
        return False


def _resolved(path):
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return Path(path).absolute()


def check_target(out, force):
    """Refuse to clobber: raise UsageError unless OUT is absent/empty or `force` applies."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a directory", hint="choose another -o")
    try:
        occupied = out.is_dir() and any(out.iterdir())
    except OSError as error:
        raise UsageError(f"cannot list the output directory {out} ({error.strerror})") from None
    if occupied:
        if not force:
            raise UsageError(f"output directory {out} is not empty", hint="pass --force to replace porter's files")
        if previous_files(out) is None:
            raise UsageError(f"output directory {out} holds no readable porter-manifest.json; --force only "
                             "replaces a previous porter output", hint="choose an empty -o")


def write_tree(out, files, force=False, keep=()):
    """Write `files` (relative path -> text or bytes) into `out`: all of them, or (on error) none.

    `keep`: the run's inputs (source, weights); never replaced or removed, even when an old manifest lists them.
    """
    out = Path(out)
    check_target(out, force)
    for relative in files:
        if not safe_relative(relative):
            raise OutputError(f"refusing to write {relative!r} outside the output directory")
    kept = {_resolved(path) for path in keep if path is not None}
    clobbered = sorted(relative for relative in files if _resolved(out / relative) in kept)
    if clobbered:
        raise OutputError(f"writing {clobbered[0]} into {out} would replace an input of this run",
                          hint="choose another -o")
    if out.is_dir() and any(out.iterdir()):
        owned = previous_files(out) or set()
        foreign = sorted(r for r in files if r not in owned and ((out / r).exists() or (out / r).is_symlink()))
        if foreign:
            raise OutputError(f"{out} holds {', '.join(foreign[:5])}, which the previous porter output does not "
                              "list; refusing to overwrite it", hint="move it away or choose another -o")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".porter-", dir=out.parent))
        staging.chmod(0o777 & ~_umask())  # it may become OUT: a directory's usual mode, not mkdtemp's 0o700
    except OSError as error:
        raise OutputError(f"cannot write beside {out} ({error.strerror or error})",
                          hint="choose a writable -o") from None
    try:
        try:
            _stage(staging, files)
        except OSError as error:
            raise OutputError(f"cannot write the output ({error.strerror or error})", str(out)) from None
        if not out.exists() or not any(out.iterdir()):
            with hold_interrupts():
                if out.exists():
                    out.rmdir()
                os.replace(staging, out)
            return
        old = {relative for relative in previous_files(out) or set() if _resolved(out / relative) not in kept}
        _commit(out, staging, files, old)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _stage(staging, files):
    for relative, content in sorted(files.items()):
        path = staging / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        if content[:2] in ("#!", b"#!"):
            _make_executable(path)


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _make_executable(path):
    """A script with a shebang (train_tpu.py) gets x wherever it has r: 0o755 under the usual umask."""
    mode = path.stat().st_mode
    path.chmod(mode | (mode & 0o444) >> 2)


def _commit(out, staging, files, old):
    """Replace the previous output's files in `out` by the staged ones; roll back on any error."""
    backup = Path(tempfile.mkdtemp(prefix=".porter-old-", dir=out.parent))
    moved_aside, placed = [], []
    try:
        with hold_interrupts():
            try:
                # The old manifest goes last and the new one comes last: a reader never sees a manifest
                # describing files that are not there yet.
                for relative in sorted(old | set(files), key=lambda r: (r == MANIFEST, r)):
                    target = out / relative
                    if target.is_file() or target.is_symlink():
                        (backup / relative).parent.mkdir(parents=True, exist_ok=True)
                        os.replace(target, backup / relative)
                        moved_aside.append(relative)
                for relative in sorted(files, key=lambda r: (r == MANIFEST, r)):
                    target = out / relative
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(staging / relative, target)
                    placed.append(relative)
            except BaseException:
                _roll_back(out, backup, moved_aside, placed)
                raise
        _remove_empty_dirs(out, old - set(files))
    except OSError as error:
        raise OutputError(f"cannot replace the previous output ({error.strerror or error}); it was left as it "
                          "was", str(out)) from None
    finally:
        shutil.rmtree(backup, ignore_errors=True)


def _roll_back(out, backup, moved_aside, placed):
    for relative in reversed(placed):
        with contextlib.suppress(OSError):
            (out / relative).unlink()
    for relative in reversed(moved_aside):
        with contextlib.suppress(OSError):
            (out / relative).parent.mkdir(parents=True, exist_ok=True)
            os.replace(backup / relative, out / relative)


def _remove_empty_dirs(out, removed):
    """Directories that only held files of the previous output go too."""
    for relative in sorted(removed, key=lambda r: -len(PurePosixPath(r).parts)):
        parent = (out / relative).parent
        while parent != out and parent.is_dir():
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent


@contextlib.contextmanager
def hold_interrupts():
    """Hold Ctrl-C (SIGINT) until the block ends, then raise KeyboardInterrupt: the block runs whole."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: received.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt
