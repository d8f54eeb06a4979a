"""Longest file first: the order in which `pytest -n 2 --dist loadfile` deals test files to its workers.

xdist's loadfile deals whole files, by default those with the most tests first; a file of a few slow tests (one
conversion of a whole folder, end-to-end training runs) then comes last and one worker runs it alone while the other
idles. Dealt by measured seconds instead (tests/file_seconds.json, written by scripts/record_test_seconds.py from a
`--durations=0` run), the last files dealt are the short ones and the two workers finish together. A file missing
from the table (new, renamed, or under a partial `--durations=N` log's cut) comes after those in it, the files with
the most tests first as xdist would deal them; the order changes no test's outcome.
"""

import json
from collections import Counter
from pathlib import Path

SECONDS_TABLE = Path(__file__).with_name("file_seconds.json")


def recorded_seconds(table=SECONDS_TABLE):
    """test file (POSIX path from the repository root) -> measured seconds; {} when there is no table."""
    try:
        return {str(path): float(seconds) for path, seconds in json.loads(table.read_text()).items()}
    except (OSError, ValueError):
        return {}


def longest_file_first(items, seconds):
    """`items` (pytest items) reordered so that files run in decreasing recorded seconds, then those without a
    figure by decreasing number of tests; a file's tests stay together and in their order, and ties keep their
    collection order."""
    first_seen, tests = {}, Counter(item_file(item) for item in items)
    for item in items:
        first_seen.setdefault(item_file(item), len(first_seen))

    def rank(item):
        path = item_file(item)
        return (-seconds.get(path, 0.0), -tests[path] if path not in seconds else 0, first_seen[path])

    return sorted(items, key=rank)


def item_file(item):
    return item.nodeid.split("::", 1)[0]


def networks_together(items):
    """`items` with the tests of one network next to each other in each corpus file (tests/corpus: the tests that
    share a `stem` parameter, in the order the networks first appear; a test without one keeps its place), so that a
    module's cache of built networks can let each go once its last test has run. Files keep their order."""
    first_seen, keys = {}, {}
    for index, item in enumerate(items):
        stem = getattr(getattr(item, "callspec", None), "params", {}).get("stem")
        path = item_file(item)
        group = (path, stem) if stem is not None and path.startswith("tests/corpus/") else (path, index)
        keys[id(item)] = (first_seen.setdefault(path, index), first_seen.setdefault(group, index))
    return sorted(items, key=lambda item: keys[id(item)])


DEFAULT_FILE_SECONDS = 15.0  # what a test file without a recorded figure is taken to cost


def suite_files(root):
    """The test files pytest collects under `root`/tests (POSIX paths from `root`): tests/test_*.py and one level of
    packages below; tests/golden's trees hold generated ports' own tests, which the suite does not collect."""
    tests = Path(root) / "tests"
    found = [*tests.glob("test_*.py"), *tests.glob("*/test_*.py")]
    return sorted(path.relative_to(root).as_posix() for path in found if path.parent.name != "golden")


def file_batches(files, seconds, limit):
    """`files` grouped into batches, one pytest process each (scripts/run_tests.py): a file of `limit` recorded
    seconds or more runs alone; lighter ones are packed, heaviest first, into batches of at most `limit` seconds.
    Batches come longest first, the order that makes parallel lanes finish together; a file keeps its tests
    together, as `--dist loadfile` did."""
    cost = {path: seconds.get(path, DEFAULT_FILE_SECONDS) for path in files}
    batches = []  # [seconds, [files]]
    for path in sorted(files, key=lambda p: (-cost[p], p)):
        room = next((batch for batch in batches if batch[0] + cost[path] <= limit), None)
        if room is None:
            batches.append([cost[path], [path]])
        else:
            room[0] += cost[path]
            room[1].append(path)
    return [paths for _, paths in sorted(batches, key=lambda batch: -batch[0])]
