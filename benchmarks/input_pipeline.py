"""Is the input pipeline the bottleneck? Training steps/s of one port with in-memory synthetic input and with the
TFRecord input `porter data` writes, side by side, from one run.

    .venv/bin/python benchmarks/input_pipeline.py                                   # train_mnist, 60 steps
    .venv/bin/python benchmarks/input_pipeline.py --fixture lenet --batch-size 128 --simulate-replicas 2 --json r.json

The fixture is converted with porter's API into a temporary directory; its train_tpu.py is imported by path. The
synthetic set train_tpu.py would train on (`synthetic_data`, labelled by a random teacher) is saved as .npz and
written as TFRecords by the real `porter data` (`--hosts`), so both runs see the same examples. Each input then
runs `train_tpu.main` (the script's own loop: strategy, XLA step, checkpoints off to a temporary directory, no
export) and its examples/s comes from `--metrics-json`, the first (compiling) call left out. The runs alternate
`--repeats` times and the best of each input is kept (other jobs on the machine only ever slow a run down).
"Input alone" is how many global batches per second the TFRecord pipeline delivers with no training at all: the
headroom the pipeline has. A ratio tfrecord/synthetic near 1 means the input is not the bottleneck.
"""

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from porter.cli import main as porter  # the repository's porter, not an installed one


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixture", default="train_mnist", help="fixtures/NAME.py to convert (default train_mnist)")
    parser.add_argument("--steps", type=int, default=60, help="training steps per run (default 60)")
    parser.add_argument("--batch-size", type=int, default=64, dest="batch_size", help="global batch (default 64)")
    parser.add_argument("--steps-per-execution", type=int, default=1, dest="steps_per_execution")
    parser.add_argument("--simulate-replicas", type=int, default=0, dest="simulate_replicas", metavar="N")
    parser.add_argument("--hosts", type=int, default=1, help="porter data --hosts (default 1)")
    parser.add_argument("--repeats", type=int, default=2, help="runs per input, alternating; best kept (default 2)")
    parser.add_argument("--json", default=None, metavar="FILE", help="write every figure here")
    return parser.parse_args(argv)


def convert_fixture(name, out):
    code = porter(["convert", str(REPO / "fixtures" / f"{name}.py"), "-o", str(out)])
    if code not in (0, 1):
        raise SystemExit(f"porter convert exited {code}")


def import_script(out):
    spec = importlib.util.spec_from_file_location("benchmark_train_tpu", out / "train_tpu.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # AutoGraph looks functions' modules up there
    spec.loader.exec_module(module)
    return module


def write_records(train, global_batch, hosts, seed, work):
    """The script's own synthetic set, as TFRecords written by `porter data`; returns the records directory."""
    import numpy as np

    inputs, targets = train.synthetic_data(train.SYNTHETIC_BATCHES * global_batch, seed)
    arrays = {f"input{i}": array for i, array in enumerate(inputs)}
    np.savez(work / "synthetic.npz", **arrays, target=targets)
    records = work / "records"
    code = porter(["data", str(work / "synthetic.npz"), "-o", str(records), "--hosts", str(hosts),
                   "--target", "target"])
    if code:
        raise SystemExit(f"porter data exited {code}")
    return records


def train_run(train, args, work, label, data):
    """examples/s of one train_tpu.main run (first call excluded), from its --metrics-json."""
    run = work / f"run-{label}"
    metrics_path = work / f"{label}.json"
    argv = ["--steps", str(args.steps), "--batch-size", str(args.batch_size), "--output-dir", str(run),
            "--steps-per-execution", str(args.steps_per_execution), "--no-export", "--metrics-json",
            str(metrics_path), "--checkpoint-every", str(10 * args.steps)]  # the final checkpoint only
    if data:
        argv += ["--data", str(data)]
    if args.simulate_replicas > 1:
        argv += ["--simulate-replicas", str(args.simulate_replicas)]
    if train.main(argv):
        raise SystemExit(f"train_tpu.main failed for the {label} input")
    metrics = json.loads(metrics_path.read_text())
    for path in sorted(run.rglob("*"), reverse=True):  # the next run starts afresh instead of resuming
        path.rmdir() if path.is_dir() else path.unlink()
    return metrics


def input_alone(train, records, global_batch, batches):
    """Global batches per second the TFRecord pipeline delivers by itself (after one warm-up batch)."""
    iterator = iter(train.make_dataset(global_batch, data=str(records)))
    next(iterator)
    started = time.perf_counter()
    for _ in range(batches):
        next(iterator)
    return batches / (time.perf_counter() - started)


def main(argv=None):
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="porter-input-bench-") as temporary:
        work = Path(temporary)
        out = work / "port"
        convert_fixture(args.fixture, out)
        train = import_script(out)
        if args.simulate_replicas > 1:  # before TensorFlow uses a device (the teacher below does)
            train.simulate_replicas(args.simulate_replicas)
        records = write_records(train, args.batch_size, args.hosts, 0, work)
        files = len(json.loads((records / "schema.json").read_text())["files"])
        best = {}
        for repeat in range(args.repeats):
            for label, data in (("synthetic", None), ("tfrecord", records)):
                metrics = train_run(train, args, work, f"{label}-{repeat}", data)
                rate = metrics["examples_per_sec"] or 0.0
                if rate > best.get(label, {}).get("examples_per_sec", -1.0):
                    best[label] = metrics
        alone = input_alone(train, records, args.batch_size, max(args.steps, 20))
    replicas = best["synthetic"]["replicas"]
    print(f"\n{args.fixture}: {best['synthetic']['strategy']} ({replicas} replica{'s' if replicas != 1 else ''}), "
          f"global batch {args.batch_size}, {args.steps} steps per run (first call left out), "
          f"{args.steps_per_execution} step(s) per call, best of {args.repeats}; TFRecords: {files} file(s)")
    print(f"{'input':<12}{'steps/s':>10}{'examples/s':>14}")
    rows = {}
    for label in ("synthetic", "tfrecord"):
        examples = best[label]["examples_per_sec"] or 0.0
        rows[label] = {"steps_per_sec": examples / args.batch_size, "examples_per_sec": examples}
        print(f"{label:<12}{rows[label]['steps_per_sec']:>10.2f}{examples:>14.1f}")
    ratio = rows["tfrecord"]["steps_per_sec"] / rows["synthetic"]["steps_per_sec"] \
        if rows["synthetic"]["steps_per_sec"] else float("nan")
    print(f"tfrecord/synthetic: {ratio:.2f} (near 1: the input is not the bottleneck); the TFRecord pipeline "
          f"alone delivers {alone:.1f} global batches/s")
    if args.json:
        Path(args.json).write_text(json.dumps({"fixture": args.fixture, "arguments": vars(args), "files": files,
                                               "runs": best, "rows": rows, "tfrecord_over_synthetic": ratio,
                                               "input_alone_batches_per_sec": alone}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
