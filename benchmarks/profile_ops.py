"""Where the time goes: a per-op profile of one fixture's forward (or training step), the port next to torch.

    .venv/bin/python benchmarks/profile_ops.py                       # resnet, 32x3x128x128, forward, TF graph
    .venv/bin/python benchmarks/profile_ops.py --mode xla --task train --top 15

The fixture is converted and its weights copied as in `run.py` (via `measure.py prepare`). The port's calls run
under `tf.profiler.experimental` and the trace's host plane (XPlane protobuf) is summed per op type (TF graph) or
per XLA cluster/kernel (XLA); torch's calls run under `torch.profiler` and are summed per aten op (self CPU time).
Each table shows milliseconds per call and the share of the total; the numbers are as noisy as the machine.
"""

import argparse
import collections
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure import import_path  # noqa: E402


def print_table(title, totals, calls, top):
    grand = sum(totals.values()) or 1.0
    print(f"\n{title}: {grand / calls:.2f} ms of op time per call")
    for name, total in sorted(totals.items(), key=lambda item: -item[1])[:top]:
        print(f"  {total / calls:9.3f} ms  {100 * total / grand:5.1f}%  {name}")


def keras_profile(meta, data, state, args):
    import numpy as np
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import keras
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    module = import_path(meta["module"])
    model = getattr(module, meta["class_name"])(**meta["init_args"])
    module.load_state_dict(model, dict(state))
    inputs, labels = tf.constant(data["inputs"]), tf.constant(data["labels"])
    jit = args.mode == "xla"
    if args.task == "forward":
        function = tf.function(lambda x: model(x, training=False), jit_compile=jit)
        step = lambda: function(inputs).numpy()  # noqa: E731
    else:
        variables = list({id(v): v for v in model.trainable_variables}.values())
        optimizer = keras.optimizers.SGD(learning_rate=0.01)
        optimizer.build(variables)

        @tf.function(jit_compile=jit)
        def train_step(x, y):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            optimizer.apply(tape.gradient(loss, variables), variables)
            return loss

        step = lambda: train_step(inputs, labels).numpy()  # noqa: E731
    for _ in range(3):
        step()
    logdir = tempfile.mkdtemp(prefix="porter-profile-")
    tf.profiler.experimental.start(logdir)
    for _ in range(args.calls):
        step()
    tf.profiler.experimental.stop()
    path = glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))[0]
    raw = Path(path).read_bytes()
    space = xplane_pb2.XSpace()
    space.ParseFromString(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    totals = collections.Counter()
    for plane in space.planes:
        if not plane.name.startswith("/host:CPU"):
            continue
        for line in plane.lines:
            if line.name not in ("tf_Compute", "tf_XLACpuCompute", "tf_inter_op", "tf_XLAEigen") and not (
                    line.name.startswith("tf_")):
                continue
            for event in line.events:
                name = plane.event_metadata[event.metadata_id].name
                if ":" not in name or name.endswith(":Process"):  # executor/step markers, not ops
                    continue
                totals[name.rsplit(":", 1)[1]] += event.duration_ps / 1e9
    print_table(f"port {args.mode} {args.task} (per op type)", totals, args.calls, args.top)
    del np


def torch_profile(meta, data, state, args):
    import numpy as np
    import torch

    torch.set_num_threads(args.threads)
    source = import_path(meta["source"])
    model = getattr(source, meta["class_name"])(**meta["init_args"])
    model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()})
    inputs, labels = torch.from_numpy(data["inputs"]), torch.from_numpy(data["labels"])
    if args.task == "forward":
        model.eval()

        def step():
            with torch.no_grad():
                model(inputs)
    else:
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

        def step():
            optimizer.zero_grad(set_to_none=True)
            logits = model(inputs)
            torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1)).backward()
            optimizer.step()
    for _ in range(3):
        step()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
        for _ in range(args.calls):
            step()
    totals = collections.Counter()
    for event in profiler.key_averages():
        totals[event.key] += event.self_cpu_time_total / 1000.0
    print_table(f"torch eager {args.task} (per aten op, self time)", totals, args.calls, args.top)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixture", default="resnet")
    parser.add_argument("--input", default="3,128,128")
    parser.add_argument("--vocab", type=int, default=0)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--mode", choices=["graph", "xla"], default="graph")
    parser.add_argument("--task", choices=["forward", "train"], default="forward")
    parser.add_argument("--side", choices=["both", "keras", "torch"], default="both")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--work", help="reuse a prepared directory (measure.py prepare)")
    args = parser.parse_args(argv)
    work = Path(args.work or tempfile.mkdtemp(prefix="porter-profile-work-"))
    if not (work / "meta.json").exists():
        done = subprocess.run([sys.executable, str(HERE / "measure.py"), "prepare", "--fixture", args.fixture,
                               "--work", str(work), "--input", args.input, "--vocab", str(args.vocab),
                               "--batch", str(args.batch)], capture_output=True, text=True)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        if not result.get("ok"):
            print(result.get("traceback") or result, file=sys.stderr)
            return 1
    import numpy as np

    meta = json.loads((work / "meta.json").read_text())
    data, state = dict(np.load(work / "data.npz")), dict(np.load(work / "state.npz"))
    print(f"{meta['fixture']} {meta['input_shape']} {args.task}, {args.threads} threads, {args.calls} calls")
    if args.side in ("both", "keras"):
        keras_profile(meta, data, state, args)
    if args.side in ("both", "torch"):
        torch_profile(meta, data, state, args)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.exit(main())
