"""Longest file first: the order in which `pytest -n 2 --dist loadfile` deals test files to its workers.

xdist's loadfile deals whole files, by default those with the most tests first; a file of a few slow tests (one
conversion of a whole folder, end-to-end training runs) then comes last and one worker runs it alone while the other
idles. Dealt by measured seconds instead (tests/file_seconds.json, written by scripts/record_test_seconds.py from a
`--durations=0` run), the last files dealt are the short ones and the two workers finish together. A file missing
from the table (new, renamed) counts as quick and keeps its collection order; the order changes no test's outcome.
"""

import json
from pathlib import Path

SECONDS_TABLE = Path(__file__).with_name("file_seconds.json")


def recorded_seconds(table=SECONDS_TABLE):
    """test file (POSIX path from the repository root) -> measured seconds; {} when there is no table."""
    try:
        return {str(path): float(seconds) for path, seconds in json.loads(table.read_text()).items()}
    except (OSError, ValueError):
        return {}


def longest_file_first(items, seconds):
    """`items` (pytest items) reordered so that files run in decreasing recorded seconds; a file's tests stay
    together and in their order, and files with equal (or no) recorded seconds keep their collection order."""
    first_seen = {}
    for item in items:
        first_seen.setdefault(item_file(item), len(first_seen))
    return sorted(items, key=lambda item: (-seconds.get(item_file(item), 0.0), first_seen[item_file(item)]))


def item_file(item):
    return item.nodeid.split("::", 1)[0]
