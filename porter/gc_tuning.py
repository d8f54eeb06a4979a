"""Garbage-collector settings for one porter command: collect young objects rarely, the old ones almost never.

A conversion allocates hundreds of thousands of long-lived objects (libcst's nodes, their positions, the IR) and
frees almost nothing until it ends. With CPython's default thresholds (700, 10, 10) the collector runs every 700
allocations and keeps rescanning those survivors: about a quarter of the CPU time of converting a 3,500-line file
(benchmarks/convert_scale.py). Cycles are still found, only in larger batches; peak memory grows by ~2%.

Reading the source makes no garbage at all: libcst's tree, its positions and porter's modules live until the command
ends. `convert` pauses the collector from before its parse starts (`pause_until_settled`, beside the imports) until
the parse is done (`settled`), then freezes what is alive then (`gc.freeze`): no later collection scans it again.
The three to four collections the parse ran scanned ~150,000 new objects and found nothing (0.07-0.09 s of CPU of
the 3,500-line file, where all collections took 0.12 s). The frozen objects go back to the collector when the
command ends (`fewer_collections`), so a caller running several commands in one process (the tests) frees them.
"""

import contextlib
import gc

# generation 0 every 50,000 net allocations instead of 700; the older generations after 50 and 1,000 of those
THRESHOLDS = (50_000, 50, 1_000)

_state = {"inside": False, "paused": False}  # within `fewer_collections`; the collector paused by this module


@contextlib.contextmanager
def fewer_collections():
    """Run the block under THRESHOLDS; the previous thresholds come back after it (porter.cli.main in a test), and
    a collector paused or frozen inside it is running again, over every object, after it."""
    previous, enabled, inside = gc.get_threshold(), gc.isenabled(), _state["inside"]
    gc.set_threshold(*THRESHOLDS)
    _state["inside"] = True
    try:
        yield
    finally:
        _state["inside"] = inside
        if not inside:
            _state["paused"] = False
            gc.unfreeze()
            if enabled:
                gc.enable()
        gc.set_threshold(*previous)


def pause_until_settled():
    """Stop collecting until `settled()` (the source is about to be parsed); only inside `fewer_collections`, which
    starts the collector again whatever happens."""
    if _state["inside"] and gc.isenabled():
        gc.disable()
        _state["paused"] = True


def settled():
    """The source is parsed: everything alive now stays so until the command ends; keep it out of every later
    collection, and collect again (when `pause_until_settled` stopped it)."""
    if _state["paused"]:
        _state["paused"] = False
        gc.freeze()
        gc.enable()
