"""How `porter convert` ends as a program: flush, then `os._exit`, instead of freeing its objects one by one.

A conversion ends holding about a million objects (libcst's tree of the source, its positions, the IR, the texts).
Freeing them when `run_convert` returned, then tearing the interpreter down (module by module, and a last full
collection) took ~0.3 s of a 3,500-line file's ~2 s (benchmarks/convert_scale.py). By then everything porter
writes is written and closed and its child processes are waited for; only the standard streams are flushed here.
It ends inside `gc_tuning.fewer_collections`: restoring CPython's default thresholds first made the next allocation
run a collection of the older generation, every object of the conversion (0.2 s).

Only where porter is the program (`porter ...`, `python -m porter ...`) and the command asked for it (`keep`): a
caller of `porter.cli.main(argv)` (the tests) gets the exit code back as always, and a process run under a
profiler, a debugger or coverage.py ends normally (`python -m cProfile -o OUT -m porter ...` writes OUT at exit).
"""

import os
import sys
from pathlib import Path

_KEPT = []  # what the command left to be dropped with the process, not freed object by object


def keep(*objects):
    """Hold `objects` until the process ends, and end it with `end` (when porter is the program)."""
    _KEPT.append(objects)


def release():
    """Drop what `keep` holds: the process goes on (main called as a function), so the objects are freed as usual."""
    _KEPT.clear()


def wanted(argv):
    """Whether `main(argv)` should end the process itself: run as the program by a command that asked for it."""
    return bool(_KEPT) and argv is None and _porter_is_the_program() and not _observed()


def _observed():
    """A profiler or tracer (cProfile, a debugger, coverage.py) is watching: it has work to do at exit."""
    return sys.getprofile() is not None or sys.gettrace() is not None or "coverage" in sys.modules


def end(code):
    """Flush the standard streams and end the process with exit status `code` (an int)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more reaches it anyway
            pass
    os._exit(code)


def _porter_is_the_program():
    """`porter` (the console script, named so on every platform) or `python -m porter` (porter/__main__.py)."""
    program = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if program is None:
        return False
    if program.stem == "porter":
        return True
    return program.name == "__main__.py" and program.resolve().parent == Path(__file__).resolve().parent
