"""Write tests/file_seconds.json, the seconds each test file took, from the log of a `pytest --durations=0` run.

    .venv/bin/python -m pytest tests -n 2 --dist loadfile --durations=0 > run.log
    .venv/bin/python scripts/record_test_seconds.py run.log

Each file's seconds are the sum of its tests' setup, call and teardown (module fixtures included, as they are paid
where the file runs). The table only orders the files xdist deals (tests/scheduling.py): a stale figure costs balance,
never a result.
"""

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

TABLE = Path(__file__).resolve().parents[1] / "tests" / "file_seconds.json"
DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s+(?:setup|call|teardown)\s+(\S+?\.py)(?:::|\s|$)")


def seconds_per_file(lines):
    """test file -> summed seconds of the `--durations` lines among `lines`."""
    totals = defaultdict(float)
    for line in lines:
        match = DURATION.match(line)
        if match:
            totals[match.group(2)] += float(match.group(1))
    return dict(totals)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="output of a pytest run with --durations=0")
    parser.add_argument("-o", "--output", type=Path, default=TABLE)
    arguments = parser.parse_args(argv)
    totals = seconds_per_file(arguments.log.read_text(errors="replace").splitlines())
    if not totals:
        print(f"record_test_seconds: no --durations lines in {arguments.log} (run pytest with --durations=0)",
              file=sys.stderr)
        return 2
    ordered = dict(sorted(((path, round(seconds)) for path, seconds in totals.items()), key=lambda kv: (-kv[1], kv[0])))
    arguments.output.write_text(json.dumps(ordered, indent=0) + "\n")
    print(f"{arguments.output}: {len(ordered)} files, {sum(ordered.values())} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
