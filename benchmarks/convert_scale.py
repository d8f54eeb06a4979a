"""How `porter convert` time grows with the model file: 1k, 3.5k and 10k lines, against `import tensorflow`.

    .venv/bin/python benchmarks/convert_scale.py                      # 1k, 3.5k, 10k lines, best of 3
    .venv/bin/python benchmarks/convert_scale.py --lines 1000,50000 --repeats 1 --json scale.json

Each size is a generated file of residual-block classes (tests/robustness/test_scale.py's `model_source`), converted
by the real CLI in a fresh process (`python -m porter convert FILE -o OUT --input-shape 8,8,8`), so the times
include start-up and ruff's formatting of the output, as a user sees them. Reported per size: wall seconds and CPU
seconds (the child's user + system time, ruff included), seconds per 1k lines, and the ratio to the wall time of
`python -c "import tensorflow"` on the same machine. Growth is the CPU time of the larger file minus a tiny file's,
per line, relative to the same for the smallest size: about 1 while conversion stays linear, ~5x-50x for a
quadratic pass. The best of `--repeats` runs is kept (other jobs on the machine only ever add time). Every run
writes into a fresh output directory (porter refuses a non-empty one), so a repeat times the same work as the first.
The issue's target follows: a 3,500-line file (the size nearest 3,500 lines) converts in under half the wall time of
`import tensorflow`. The last line says how often that file's text was parsed during one in-process conversion
(libcst, `ast.parse`, and CPython's `compile()` for the syntax check). porter is byte-compiled before timing, as an
install leaves it.

The unit test (tests/robustness/test_scale.py) counts work instead of timing it; this is where the clock lives.
"""

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from tests.robustness.test_scale import model_source  # the same generated files the test counts

TINY = 40
TARGET_LINES = 3_500  # the yardstick: converting this size takes < TARGET_RATIO x import tensorflow
TARGET_RATIO = 0.5


def child_environment():
    """The environment of the timed commands: this checkout's porter first on the path (an editable install of
    another checkout would otherwise be the one timed), TensorFlow's start-up logging off."""
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "TF_CPP_MIN_LOG_LEVEL": "3"}


def timed(command, cwd):
    """(wall seconds, CPU seconds of the child and its children) of one command; raises on a non-zero exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=child_environment(), check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} exited {result.returncode}: {result.stderr.strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def best(command, cwd, repeats):
    """(least wall seconds, least CPU seconds) over `repeats` runs; `command` may be a function of the run number."""
    runs = [timed(command(run) if callable(command) else command, cwd) for run in range(repeats)]
    return min(w for w, _ in runs), min(c for _, c in runs)


def convert_times(lines, folder, repeats):
    source = folder / f"model_{lines}.py"
    source.write_text(model_source(lines))
    actual = source.read_text().count("\n")

    def command(run):  # a fresh output directory per run: porter exits 2 on a non-empty one
        return [sys.executable, "-m", "porter", "convert", str(source), "-o", str(folder / f"out_{lines}_{run}"),
                "--input-shape", "8,8,8"]

    wall, cpu = best(command, folder, repeats)
    return {"lines": actual, "wall_s": wall, "cpu_s": cpu}


def parses_of_the_source(lines, folder):
    """(libcst parses, ast.parse calls, CPython compiles) of a `lines`-line file's own text during one in-process
    conversion: porter parses the source once (issue #9); the syntax check compiles it once more in CPython."""
    import ast
    import builtins

    import libcst

    from porter.convert import ConvertOptions, convert

    source = folder / f"model_{lines}_parses.py"
    text = model_source(lines)
    source.write_text(text)
    counts = {"libcst": 0, "ast": 0, "compile": 0}
    originals = libcst.parse_module, ast.parse, builtins.compile

    def counting(key, function):
        def counted(code, *args, **kwargs):
            counts[key] += code == text
            return function(code, *args, **kwargs)
        return counted

    libcst.parse_module, ast.parse, builtins.compile = (counting("libcst", originals[0]), counting("ast", originals[1]),
                                                        counting("compile", originals[2]))
    try:
        convert(ConvertOptions(source, folder / f"out_{lines}_parses", input_specs=["8,8,8"]))
    finally:
        libcst.parse_module, ast.parse, builtins.compile = originals
    return counts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default="1000,3500,10000", help="comma-separated file sizes in lines")
    parser.add_argument("--repeats", type=int, default=3, help="runs per size; the best is kept (default 3)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    try:
        sizes = sorted(int(n) for n in args.lines.split(","))
    except ValueError:
        parser.error(f"--lines: comma-separated integers expected, got {args.lines!r}")
    if args.repeats < 1 or any(n < 2 * TINY for n in sizes):
        parser.error(f"--repeats must be >= 1 and every size >= {2 * TINY} lines")

    # as `pip install` leaves porter (and as TensorFlow's own modules are): byte-compiled, so that start-up is
    # not timed compiling porter's ~200 modules (PYTHONDONTWRITEBYTECODE would otherwise make every run do it)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "porter")], check=True, capture_output=True)
    with tempfile.TemporaryDirectory(prefix="porter-scale-") as tmp:
        folder = Path(tmp)
        tf_wall, tf_cpu = best([sys.executable, "-c", "import tensorflow"], folder, args.repeats)
        tiny = convert_times(TINY, folder, args.repeats)
        rows = [convert_times(n, folder, args.repeats) for n in sizes]
        parses = parses_of_the_source(min(sizes, key=lambda n: abs(n - TARGET_LINES)), folder)

    base = None
    for row in rows:
        per_line = (row["cpu_s"] - tiny["cpu_s"]) / max(row["lines"] - tiny["lines"], 1)
        base = base if base is not None else per_line
        row["growth"] = per_line / base if base > 0 else float("nan")
        row["vs_import_tensorflow"] = row["wall_s"] / tf_wall
        row["cpu_vs_import_tensorflow"] = row["cpu_s"] / tf_cpu

    print(f"porter convert scale on {platform.node() or 'this machine'} ({platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}); best of {args.repeats}")
    print(f'python -c "import tensorflow": {tf_wall:.2f} s wall, {tf_cpu:.2f} s CPU; '
          f"a {tiny['lines']}-line file converts in {tiny['wall_s']:.2f} s wall, {tiny['cpu_s']:.2f} s CPU")
    header = ["lines", "wall s", "CPU s", "CPU s / 1k lines", "growth per line", "x import tensorflow (wall)",
              "x import tensorflow (CPU)"]
    table = [[f"{r['lines']:,}", f"{r['wall_s']:.2f}", f"{r['cpu_s']:.2f}", f"{1000 * r['cpu_s'] / r['lines']:.3f}",
              f"{r['growth']:.2f}", f"{r['vs_import_tensorflow']:.2f}", f"{r['cpu_vs_import_tensorflow']:.2f}"]
             for r in rows]
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(header)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for line in table:
        print("| " + " | ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)) + " |")
    target = min(rows, key=lambda r: abs(r["lines"] - TARGET_LINES))
    verdict = "met" if target["vs_import_tensorflow"] < TARGET_RATIO else "not met"
    print(f"{target['lines']:,} lines: {target['vs_import_tensorflow']:.2f} x the wall time of import tensorflow "
          f"(target < {TARGET_RATIO}: {verdict})")
    print(f"the {target['lines']:,}-line source was parsed by libcst {parses['libcst']} time(s) and by ast.parse "
          f"{parses['ast']} time(s); CPython's compile() read the text {parses['compile']} time(s) (the syntax check)")
    if args.json:
        args.json.write_text(json.dumps({"machine": platform.node(), "cpus": os.cpu_count(), "repeats": args.repeats,
                                         "import_tensorflow": {"wall_s": tf_wall, "cpu_s": tf_cpu},
                                         "tiny": tiny, "sizes": rows, "parses_of_the_source": parses}, indent=2)
                             + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
