"""Porter's benchmark: generated Keras ports vs their torch originals, side by side in one run, one table of ratios.

    .venv/bin/python benchmarks/run.py                     # resnet, mobilenetv2, gpt_mini; forward and training
    .venv/bin/python benchmarks/run.py --models resnet --tasks forward --repeats 10 --json out.json

For each fixture the model is converted with porter's public API, then every configuration runs in its own
process (`measure.py`) pinned to the same number of CPU threads (torch.set_num_threads / TF intra-op threads;
one inter-op thread on both sides), fp32, one fixed batch:

- forward (batch 32, inference): torch eager, torch.compile, the port as a `tf.function` (TF graph) and as a
  `tf.function(jit_compile=True)` (XLA); each output is checked against torch eager's before timing;
- train: one full step (forward, cross-entropy, backward, SGD update) in the same four modes.

Times are the median of `--repeats` calls after `--warmup` calls (the first call, which traces/compiles, is
reported separately in the JSON). Memory is each configuration process's peak RSS (`ru_maxrss`) minus its RSS
right after importing its framework: what building, compiling and running the model added. A configuration
that fails (torch.compile without a working C++ toolchain, say) shows "n/a" with the reason below the table.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

# fixture -> (input shape without batch, token vocabulary for integer inputs or 0)
MODELS = {
    "resnet": ("3,128,128", 0),
    "mobilenetv2": ("3,128,128", 0),
    "gpt_mini": ("32", 512),
}
# column -> (side, mode)
MODES = {
    "torch eager": ("torch", "eager"),
    "torch.compile": ("torch", "compile"),
    "port TF graph": ("keras", "graph"),
    "port XLA": ("keras", "xla"),
}


def run_measure(arguments, timeout):
    """Run measure.py with `arguments`; its last stdout line as a dict (an `ok: False` dict on any failure)."""
    command = [sys.executable, str(HERE / "measure.py"), *arguments]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONWARNINGS="ignore")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {timeout} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return {"ok": False, "error": tail[0][:300]}
    result = json.loads(lines[-1])
    if not result.get("ok") and result.get("traceback"):
        print(result["traceback"], file=sys.stderr)
    return result


def machine_description():
    """nproc, CPU model, Python/torch/TF/Keras versions (read without importing the frameworks here)."""
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    probe = ("import importlib.metadata as m\n"
             "def v(*names):\n"
             "    for name in names:\n"
             "        try:\n"
             "            return f'{names[0]} {m.version(name)}'\n"
             "        except m.PackageNotFoundError:\n"
             "            pass\n"
             "    return f'{names[0]} missing'\n"
             "print(', '.join([v('torch'), v('tensorflow', 'tensorflow-cpu'), v('keras')]))")
    versions = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip()
    return f"{os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()}, {versions}"


def format_ms(result):
    return f"{result['ms']:.1f}" if result.get("ok") else "n/a"


def format_ratio(port, reference):
    if not (port.get("ok") and reference.get("ok")):
        return "n/a"
    return f"{port['ms'] / reference['ms']:.2f}"


def format_memory(result):
    if not result.get("ok"):
        return "n/a"
    return f"{result['peak_rss_mib'] - result['import_rss_mib']:.0f}"


def table(results, tasks):
    """Markdown table: one row per (model, task); times in ms, ratios port / torch, memory in MiB."""
    header = ("| model | task | torch eager ms | torch.compile ms | port TF graph ms | port XLA ms "
              "| graph/eager | XLA/eager | graph/compile | XLA/compile "
              "| MiB torch eager | MiB torch.compile | MiB port graph | MiB port XLA |")
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    notes = []
    for model, by_task in results.items():
        for task in tasks:
            cells = by_task.get(task)
            if cells is None:
                continue
            eager, compiled = cells["torch eager"], cells["torch.compile"]
            graph, xla = cells["port TF graph"], cells["port XLA"]
            lines.append(
                f"| {model} | {task} | {format_ms(eager)} | {format_ms(compiled)} | {format_ms(graph)} "
                f"| {format_ms(xla)} | {format_ratio(graph, eager)} | {format_ratio(xla, eager)} "
                f"| {format_ratio(graph, compiled)} | {format_ratio(xla, compiled)} | {format_memory(eager)} "
                f"| {format_memory(compiled)} | {format_memory(graph)} | {format_memory(xla)} |"
            )
            for column, result in cells.items():
                if not result.get("ok"):
                    notes.append(f"- {model} {task} {column}: n/a ({result.get('error')})")
    return "\n".join(lines + ([""] + notes if notes else []))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated fixtures (default: all)")
    parser.add_argument("--tasks", default="forward,train", help="forward, train or both")
    parser.add_argument("--modes", default=",".join(MODES), help="columns to measure (default: all four)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--size", type=int, default=None, help="image side for the convnets (default 128)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--timeout", type=int, default=900, help="seconds per configuration")
    parser.add_argument("--json", help="also write every measurement to this file")
    parser.add_argument("--convert-scale", action="store_true",
                        help="also run benchmarks/convert_scale.py (porter convert time vs file size), if present")
    args = parser.parse_args(argv)

    models = [m.strip() for m in args.models.split(",") if m.strip()]
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    for name in models:
        if name not in MODELS:
            parser.error(f"unknown model {name!r} (known: {', '.join(MODELS)})")
    for mode in modes:
        if mode not in MODES:
            parser.error(f"unknown mode {mode!r} (known: {', '.join(MODES)})")
    description = machine_description()
    print(f"machine: {description}; {args.threads} threads; batch {args.batch}; fp32; median of {args.repeats} "
          f"after {args.warmup} warm-up calls", flush=True)

    results = {}
    with tempfile.TemporaryDirectory(prefix="porter-bench-") as temporary:
        for name in models:
            shape, vocab = MODELS[name]
            if args.size and not vocab:
                shape = ",".join(shape.split(",")[:1] + [str(args.size)] * (len(shape.split(",")) - 1))
            work = Path(temporary) / name
            work.mkdir()
            prepared = run_measure(["prepare", "--fixture", name, "--work", str(work), "--input", shape,
                                    "--vocab", str(vocab), "--batch", str(args.batch)], args.timeout)
            results[name] = {}
            for task in tasks:
                cells = {}
                for column in MODES:
                    side, mode = MODES[column]
                    if column not in modes:
                        cells[column] = {"ok": False, "error": "not measured (--modes)"}
                    elif not prepared.get("ok"):
                        cells[column] = {"ok": False, "error": f"conversion failed: {prepared.get('error')}"}
                    else:
                        cells[column] = run_measure(
                            ["time", "--work", str(work), "--side", side, "--mode", mode, "--task", task,
                             "--threads", str(args.threads), "--warmup", str(args.warmup),
                             "--repeats", str(args.repeats)], args.timeout)
                    cell = cells[column]
                    shown = f"{cell['ms']:.1f} ms" if cell.get("ok") else f"n/a ({cell.get('error')})"
                    print(f"  {name} [{shape}] {task} {column}: {shown}", flush=True)
                results[name][task] = cells
    print()
    print(table(results, tasks))
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": description, "threads": args.threads,
                                               "batch": args.batch, "results": results}, indent=1))
    scale = HERE / "convert_scale.py"
    if args.convert_scale and scale.exists():
        print()
        subprocess.run([sys.executable, str(scale)], cwd=REPO, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
