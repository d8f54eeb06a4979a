"""Run the whole test suite as batches of test files, each batch in a fresh pytest process, two at a time.

    .venv/bin/python scripts/run_tests.py              # what .ci/run runs
    .venv/bin/python scripts/run_tests.py --lanes 1 tests/corpus/test_timm.py

Why not one `pytest -n 2`: an xdist worker lives for the whole run, and what a test module leaves behind
(TensorFlow's allocations, built full-size networks, loaded ports) is not all given back when the module ends. On a
24 GB machine one worker running the corpus files in turn grew past 15 GB and the run stalled (CI stop 30 ran out its
90 minutes at 27%). Here a process runs at most one heavy file, or light files worth `--batch-seconds` of recorded
time (tests/file_seconds.json), and then exits, giving everything back.

Batches are dealt longest first to `--lanes` processes at a time (tests/scheduling.py), so the lanes finish together.
Each batch's output is printed whole when it ends; the run ends with one line per batch (files, outcome counts,
seconds, peak memory) and every failing test, and exits non-zero when any batch failed, timed out or crashed.
`--durations=0` is passed on, so scripts/record_test_seconds.py reads this log as it reads a pytest log.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.scheduling import file_batches, recorded_seconds, suite_files

PYTEST = ["-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider", "--durations=0"]
COUNTS = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)")
NO_TESTS = 5  # pytest's exit code when a batch collected nothing (every test deselected)


class Batch:
    """Test files run by one pytest process, and what came of it."""

    def __init__(self, number, files):
        self.number, self.files = number, files
        self.output, self.code, self.seconds, self.peak_mb, self.timed_out = "", None, 0.0, 0, False

    def run(self, extra, timeout):
        started = time.monotonic()
        process = subprocess.Popen([sys.executable, *PYTEST, *extra, *self.files], cwd=ROOT, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        timer = threading.Timer(timeout, self._stop, (process,))
        timer.start()
        try:
            self.output = process.stdout.read()
            # wait4 (not wait) for the child's own peak resident memory
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
        finally:
            timer.cancel()
            process.stdout.close()
        self.code, self.seconds = process.returncode, time.monotonic() - started
        self.peak_mb = usage.ru_maxrss // 1024

    def _stop(self, process):
        self.timed_out = True
        os.killpg(process.pid, signal.SIGKILL)

    @property
    def ok(self):
        return not self.timed_out and self.code in (0, NO_TESTS)

    def counts(self):
        """'3 passed, 1 skipped' from pytest's last summary line; what went wrong where there is none."""
        if self.timed_out:
            return "timed out"
        tail = [line for line in self.output.splitlines() if COUNTS.search(line)]
        if not tail:
            return f"exit {self.code}, no summary (crashed?)"
        return ", ".join(f"{n} {what}" for n, what in COUNTS.findall(tail[-1]))

    def failures(self):
        return [line for line in self.output.splitlines() if line.startswith(("FAILED ", "ERROR "))]

    def label(self):
        names = [Path(name).name for name in self.files]
        return names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more"


def run_lanes(batches, lanes, extra, timeout):
    """Run `batches` in order, `lanes` at a time; print each batch's output as it ends."""
    pending, lock = list(batches), threading.Lock()

    def lane():
        while True:
            with lock:
                if not pending:
                    return
                batch = pending.pop(0)
            batch.run(extra, timeout)
            with lock:
                print(f"\n===== batch {batch.number}: {' '.join(batch.files)}", flush=True)
                print(batch.output, end="" if batch.output.endswith("\n") else "\n")
                print(f"===== batch {batch.number}: {batch.counts()} in {batch.seconds:.0f} s, "
                      f"peak {batch.peak_mb} MB", flush=True)

    threads = [threading.Thread(target=lane) for _ in range(lanes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def summary(batches, seconds):
    lines = ["", f"===== {len(batches)} batches in {seconds:.0f} s"]
    for batch in sorted(batches, key=lambda b: b.number):
        mark = "ok  " if batch.ok else "FAIL"
        lines.append(f"{mark} batch {batch.number:>2} {batch.label():<45} {batch.counts()} "
                     f"({batch.seconds:.0f} s, peak {batch.peak_mb} MB)")
    failed = [line for batch in batches for line in batch.failures()]
    broken = [batch for batch in batches if not batch.ok]
    lines += failed
    totals = {}
    for batch in batches:
        for n, what in COUNTS.findall(batch.counts()):
            totals[what] = totals.get(what, 0) + int(n)
    lines.append("===== " + (", ".join(f"{n} {what}" for what, n in totals.items()) or "no tests") +
                 ("" if not broken else f"; {len(broken)} batch(es) failed"))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="test files (default: the whole suite under tests/)")
    parser.add_argument("--lanes", type=int, default=2, help="pytest processes at a time (default 2)")
    parser.add_argument("--batch-seconds", type=float, default=240.0,
                        help="recorded seconds of light files one process runs (default 240)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds before a batch is killed")
    parser.add_argument("-k", dest="keyword", help="passed on to pytest")
    arguments = parser.parse_args(argv)
    files = arguments.files or suite_files(ROOT)
    plan = file_batches(files, recorded_seconds(), arguments.batch_seconds)
    batches = [Batch(number, batch) for number, batch in enumerate(plan, 1)]
    extra = ["-k", arguments.keyword] if arguments.keyword else []
    print(f"run_tests: {len(files)} test files in {len(batches)} batches, {arguments.lanes} at a time", flush=True)
    started = time.monotonic()
    run_lanes(batches, arguments.lanes, extra, arguments.timeout)
    print(summary(batches, time.monotonic() - started), flush=True)
    return 0 if all(batch.ok for batch in batches) else 1


if __name__ == "__main__":
    sys.exit(main())
