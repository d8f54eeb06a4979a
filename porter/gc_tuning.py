"""Garbage-collector settings for one porter command: collect young objects rarely, the old ones almost never.

A conversion allocates hundreds of thousands of long-lived objects (libcst's nodes, their positions, the IR) and
frees almost nothing until it ends. With CPython's default thresholds (700, 10, 10) the collector runs every 700
allocations and keeps rescanning those survivors: about a quarter of the CPU time of converting a 3,500-line file
(benchmarks/convert_scale.py). Cycles are still found, only in larger batches; peak memory grows by ~2%.
"""

import contextlib
import gc

# generation 0 every 50,000 net allocations instead of 700; the older generations after 50 and 1,000 of those
THRESHOLDS = (50_000, 50, 1_000)


@contextlib.contextmanager
def fewer_collections():
    """Run the block under THRESHOLDS; the previous thresholds come back after it (porter.cli.main in a test)."""
    previous = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*previous)
