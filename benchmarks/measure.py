"""One benchmark measurement in its own process: prepare a fixture, or time one (model, framework, mode) pair.

`run.py` starts this script once per configuration so that each peak RSS (`resource.getrusage(...).ru_maxrss`) is
that configuration's alone, and so that only the framework being measured is imported (a torch measurement never
loads TensorFlow and the reverse). Every measurement prints one JSON object on its last stdout line.

    measure.py prepare  --fixture resnet --work DIR --input 3,128,128 --batch 32
    measure.py time     --work DIR --side keras --mode xla --task forward --threads 2

`prepare` converts the fixture with porter's public API (`porter.convert.convert` + `porter.output.write_tree`),
builds the torch model (parameters and BatchNorm statistics moved off their defaults), saves its state_dict, one
input batch, labels and torch's eval-mode output into DIR. `time` rebuilds one side from those files (the Keras
port imported by path, weights copied with the generated `load_state_dict`), checks its output against torch's
before timing, then reports the median of several timed repeats after warm-up.
"""

import argparse
import json
import os
import resource
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"


def peak_rss_mib():
    """This process's peak resident set size so far, MiB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def import_path(path):
    """Import a Python file by path; its folder goes first on sys.path so a runtime module beside it resolves."""
    sys.path.insert(0, str(Path(path).resolve().parent))
    if str(REPO) not in sys.path:
        sys.path.append(str(REPO))
    from porter.verify.harness import import_path as porter_import_path

    return porter_import_path(path)


# --- prepare ---------------------------------------------------------------------------------------------------


def prepare(args):
    import torch

    from porter.convert import ConvertOptions, convert
    from porter.output import write_tree
    from porter.verify.torch_bridge import perturb_torch_module, torch_state_numpy

    work = Path(args.work)
    out = work / "port"
    started = time.perf_counter()
    conversion = convert(ConvertOptions(FIXTURES / f"{args.fixture}.py", out, force=True))
    write_tree(out, conversion.files)
    convert_s = time.perf_counter() - started
    manifest = json.loads((out / "porter-manifest.json").read_text())
    entry = manifest["sources"][0]
    class_name = manifest["main_class"]
    init_args = manifest.get("init_args") or {}

    source = import_path(FIXTURES / f"{args.fixture}.py")
    torch.manual_seed(0)
    model = getattr(source, class_name)(**init_args)
    perturb_torch_module(model, 0)
    model.eval()
    state = torch_state_numpy(model)

    rng = np.random.default_rng(0)
    shape = (args.batch, *[int(s) for s in args.input.split(",")])
    if args.vocab:  # token ids
        inputs = rng.integers(0, args.vocab, size=shape).astype(np.int64)
    else:
        inputs = rng.standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(inputs)).numpy()
    labels = rng.integers(0, expected.shape[-1], size=expected.shape[:-1]).astype(np.int64)

    np.savez(work / "state.npz", **state)
    np.savez(work / "data.npz", inputs=inputs, labels=labels, expected=expected)
    meta = {
        "fixture": args.fixture,
        "source": str(FIXTURES / f"{args.fixture}.py"),
        "module": str(out / entry["module"]),
        "class_name": class_name,
        "init_args": init_args,
        "input_shape": list(shape),
        "exit_code": conversion.exit_code,
        "convert_s": convert_s,
    }
    (work / "meta.json").write_text(json.dumps(meta, indent=1))
    return meta


# --- timing ----------------------------------------------------------------------------------------------------


def timed(function, warmup, repeats):
    """(median ms, [p25, p75] ms, first-call s) of `function()` after `warmup` calls; the first call is timed alone."""
    started = time.perf_counter()
    function()
    first_s = time.perf_counter() - started
    for _ in range(max(warmup - 1, 0)):
        function()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        samples.append((time.perf_counter() - started) * 1000.0)
    quartiles = statistics.quantiles(samples, n=4) if len(samples) > 1 else samples * 3
    return statistics.median(samples), [quartiles[0], quartiles[2]], first_s


def max_error(expected, actual):
    """Max absolute error of `actual` vs `expected`, relative to max(1, max|expected|)."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        raise AssertionError(f"output shape {actual.shape} != torch's {expected.shape}")
    return float(np.max(np.abs(actual - expected)) / max(1.0, float(np.max(np.abs(expected)))))


def time_torch(args, meta, data, state):
    import torch

    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    import_rss = peak_rss_mib()
    source = import_path(meta["source"])
    torch.manual_seed(0)
    model = getattr(source, meta["class_name"])(**meta["init_args"])
    model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()})
    inputs = torch.from_numpy(data["inputs"])
    labels = torch.from_numpy(data["labels"])
    model.eval()
    runner = model
    if args.mode == "compile":
        runner = torch.compile(model)

    if args.task == "forward":
        with torch.no_grad():
            error = max_error(data["expected"], runner(inputs).numpy())

        def step():
            with torch.no_grad():
                return runner(inputs)

    else:
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
        error = None

        def step():
            optimizer.zero_grad(set_to_none=True)
            logits = runner(inputs)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
            loss.backward()
            optimizer.step()
            return loss

    median, spread, first_s = timed(step, args.warmup, args.repeats)
    return {"ms": median, "spread_ms": spread, "first_call_s": first_s, "max_error": error, "import_rss_mib": import_rss}


def time_keras(args, meta, data, state):
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import keras

    import_rss = peak_rss_mib()
    module = import_path(meta["module"])
    keras.utils.set_random_seed(0)
    model = getattr(module, meta["class_name"])(**meta["init_args"])
    module.load_state_dict(model, dict(state))
    inputs = tf.constant(data["inputs"])
    labels = tf.constant(data["labels"])
    jit = args.mode == "xla"

    if args.task == "forward":
        function = tf.function(lambda x: model(x, training=False), jit_compile=jit)
        error = max_error(data["expected"], function(inputs).numpy())

        def step():
            return function(inputs).numpy()

    else:
        variables, seen = [], set()
        for variable in model.trainable_variables:  # a tied weight is listed once
            if id(variable) not in seen:
                seen.add(id(variable))
                variables.append(variable)
        optimizer = keras.optimizers.SGD(learning_rate=args.lr)
        optimizer.build(variables)

        @tf.function(jit_compile=jit)
        def train_step(x, y):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            gradients = tape.gradient(loss, variables)
            optimizer.apply(gradients, variables)
            return loss

        error = None

        def step():
            return train_step(inputs, labels).numpy()

    median, spread, first_s = timed(step, args.warmup, args.repeats)
    return {"ms": median, "spread_ms": spread, "first_call_s": first_s, "max_error": error, "import_rss_mib": import_rss}


def time_one(args):
    work = Path(args.work)
    meta = json.loads((work / "meta.json").read_text())
    data = dict(np.load(work / "data.npz"))
    state = dict(np.load(work / "state.npz"))
    measure = time_torch if args.side == "torch" else time_keras
    result = measure(args, meta, data, state)
    if result["max_error"] is not None and result["max_error"] > args.tolerance:
        raise AssertionError(f"output differs from torch's by {result['max_error']:.3g} (> {args.tolerance})")
    result["peak_rss_mib"] = peak_rss_mib()
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["prepare", "time"])
    parser.add_argument("--work", required=True)
    parser.add_argument("--fixture")
    parser.add_argument("--input", help="input shape without the batch, e.g. 3,128,128")
    parser.add_argument("--vocab", type=int, default=0, help="integer token inputs in [0, VOCAB)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--side", choices=["torch", "keras"])
    parser.add_argument("--mode", choices=["eager", "compile", "graph", "xla"])
    parser.add_argument("--task", choices=["forward", "train"], default="forward")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args(argv)
    try:
        result = prepare(args) if args.action == "prepare" else time_one(args)
        result["ok"] = True
    except Exception as error:  # reported as one table cell, the traceback kept for the log
        result = {"ok": False, "error": f"{type(error).__name__}: {error}".splitlines()[0][:300],
                  "traceback": traceback.format_exc()}
    sys.stdout.flush()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.exit(main())
