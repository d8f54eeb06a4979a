"""`porter data SRC... -o DIR`: the user's tensors -> sharded TFRecords plus schema.json for train_tpu.py --data.

Sources: `.pt`/`.pth` files saved with torch.save (a tensor, a tuple/list/dict of tensors, or a TensorDataset;
read with `torch.load(weights_only=True)`, only TensorDataset added to the allowed classes), `.npz` archives and
`.npy` arrays (read without pickle). The arrays are taken in order; the last is the target unless --target names
one (a key called target/targets/label/labels/y is taken first). All must have the same number of examples.

Each example is a tf.train.Example whose features hold the flattened array rows (float_list for floats,
int64_list for integers and booleans); schema.json records names, shapes (example axis excluded), dtypes and the
number of examples:
    {"format": "porter-tfrecord-v1", "num_examples": N, "inputs": [{"name", "shape", "dtype"}, ...],
     "target": {"name", "shape", "dtype"}, "files": [...], "hosts": H, "channels_last_io": false}

Pod slices: every host reads its own files (train_tpu.py shards the file list per host), so `--hosts H` writes at
least 8 files per host, and a file count that leaves hosts without a file of their own is warned about. Without
--hosts the count follows --shard-mb alone. DIR may be a gs:// path (written through tf.io.gfile), which pods need.
`--channels-last-io`: image arrays (rank 4 with the example axis, NCHW as torch keeps them) are written NHWC; their
schema entries carry `"layout": "channels_last"` and the NHWC shape, so the reader needs no transpose.
"""

import json
import math
import os
import sys
from pathlib import Path

from porter.errors import UsageError

COMMAND = "data"
FORMAT = "porter-tfrecord-v1"
TARGET_NAMES = ("target", "targets", "label", "labels", "y")
EXIT_OK = 0
SHARDS_PER_HOST = 8  # enough files per host for interleaved reads to keep a TPU host's input pipeline busy
IMAGE_RANK = 4  # NCHW with the example axis: what --channels-last-io writes as NHWC
CHANNELS_LAST = "channels_last"


def add_parser(subparsers):
    parser = subparsers.add_parser(
        COMMAND, help="convert tensors (.pt, .npz, .npy) into TFRecord shards for train_tpu.py --data",
        description="Write the examples of SRC files (torch.save'd tensors or TensorDataset, .npz, .npy) as "
                    "sharded TFRecords plus schema.json into DIR, ready for `python train_tpu.py --data DIR` "
                    "(copy DIR to gs:// for TPU pods). The last array is the target unless --target names one.")
    parser.add_argument("sources", metavar="SRC", nargs="+", help=".pt/.pth, .npz or .npy files")
    parser.add_argument("-o", "--out", metavar="DIR", required=True,
                        help="output directory, local or gs:// (what train_tpu.py --data reads)")
    parser.add_argument("--target", metavar="NAME", default=None,
                        help="which array is the training target (default: target/label/y, else the last)")
    parser.add_argument("--shards", type=int, default=None, metavar="N",
                        help="number of TFRecord files (default: about --shard-mb each)")
    parser.add_argument("--shard-mb", type=float, default=100.0, metavar="MB",
                        help="approximate shard size in MB when --shards is not given (default 100)")
    parser.add_argument("--hosts", type=int, default=None, metavar="N",
                        help="TPU hosts that will read the files (a pod slice's worker count): without --shards, "
                             f"at least {SHARDS_PER_HOST} files per host; a warning when hosts would get no file")
    parser.add_argument("--channels-last-io", action="store_true", dest="channels_last_io",
                        help="write images (NCHW arrays of rank 4) channels-last (NHWC) for train_tpu.py "
                             "--channels-last-io; schema.json records the layout")
    parser.add_argument("--manifest", metavar="FILE", default=None,
                        help="porter-manifest.json of the port: check the inputs against its example inputs")
    parser.add_argument("--force", action="store_true", help="replace the TFRecords and schema.json in DIR")
    return parser


def run(args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    arrays = []
    for source in args.sources:
        arrays.extend(read_arrays(Path(source)))
    if not arrays:
        raise UsageError("no arrays found in the sources")
    inputs, target = split_target(arrays, args.target)
    count = check_lengths(inputs + [target])
    inputs = [(name, normalise(name, array)) for name, array in inputs]
    target = (target[0], normalise(target[0], target[1]))
    if args.manifest:
        check_manifest(Path(args.manifest), inputs)  # against the model's NCHW example inputs, before any transpose
    if args.hosts is not None and args.hosts < 1:
        raise UsageError("--hosts must be at least 1")
    if args.shards is not None and args.shards < 1:
        raise UsageError("--shards must be at least 1")
    channels_last = getattr(args, "channels_last_io", False)
    inputs = [with_layout(name, array, channels_last) for name, array in inputs]
    target = with_layout(*target, channels_last and target[1].dtype.kind == "f")  # class maps stay as they are
    out = args.out  # a string: Path would fold gs:// into gs:/
    prepare_out(out, args.force)
    total_bytes = sum(a.nbytes for _, a, _ in inputs + [target])
    shards = shard_count(args.shards, total_bytes, args.shard_mb, args.hosts, count)
    hosts = args.hosts or 1
    if shards < hosts:
        warn_hosts_without_files(shards, hosts, count)
    files = write_shards(out, [(n, a) for n, a, _ in inputs], target[:2], count, shards)
    schema = {
        "format": FORMAT,
        "num_examples": count,
        "inputs": [field(name, array, layout) for name, array, layout in inputs],
        "target": field(*target),
        "files": files,
        "sources": [Path(s).name for s in args.sources],
        "hosts": hosts,
        "channels_last_io": channels_last,
    }
    write_text(out, "schema.json", json.dumps(schema, indent=2) + "\n")
    print(f"porter: wrote {count} examples into {len(files)} TFRecord file(s) and schema.json in {out} "
          f"(inputs: {', '.join(n for n, _, _ in inputs)}; target: {target[0]})")
    return EXIT_OK


# --- reading ---------------------------------------------------------------------------------------------------
def read_arrays(path):
    """[(name, numpy array)] from one source file."""
    import numpy as np

    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".npy":
        try:
            return [(path.stem, np.load(path, allow_pickle=False))]
        except ValueError as error:
            raise UsageError(f"{path}: cannot read as a .npy array without pickle ({error})") from None
    if suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as archive:
                return [(key, archive[key]) for key in archive.files]
        except ValueError as error:
            raise UsageError(f"{path}: cannot read as a .npz archive without pickle ({error})") from None
    if suffix in (".pt", ".pth"):
        return read_torch(path)
    raise UsageError(f"{path}: unknown file type {suffix!r}", hint="use .pt/.pth, .npz or .npy")


def read_torch(path):
    import torch
    from torch.utils.data import TensorDataset

    try:
        with torch.serialization.safe_globals([TensorDataset]):
            value = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # the unpickler refuses anything beyond tensors and containers
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UsageError(f"{path}: cannot be read with torch.load(weights_only=True) ({first})",
                         hint="save tensors, a tuple/dict of tensors or a TensorDataset") from None
    if isinstance(value, TensorDataset):
        value = tuple(value.tensors)
    if isinstance(value, torch.Tensor):
        return [(path.stem, _numpy(value))]
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value):
        names = [f"input{i}" for i in range(len(value) - 1)] + ["target"] if len(value) > 1 else [path.stem]
        return [(name, _numpy(v)) for name, v in zip(names, value)]
    if isinstance(value, dict) and value and all(isinstance(v, torch.Tensor) for v in value.values()):
        return [(str(k), _numpy(v)) for k, v in value.items()]
    raise UsageError(f"{path}: holds {type(value).__name__}, not tensors",
                     hint="save a tensor, a tuple/list/dict of tensors or a TensorDataset")


def _numpy(tensor):
    import torch

    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    return tensor.numpy()


def split_target(arrays, target_name):
    names = [n for n, _ in arrays]
    if len(set(names)) != len(names):
        arrays = [(f"{n}_{i}" if names.count(n) > 1 else n, a) for i, (n, a) in enumerate(arrays)]
        names = [n for n, _ in arrays]
    if len(arrays) < 2:
        raise UsageError("the sources hold one array; training needs inputs and a target",
                         hint="pass the inputs and the targets (e.g. x.npy y.npy, or a TensorDataset)")
    if target_name is not None:
        if target_name not in names:
            raise UsageError(f"--target {target_name}: no array of that name", hint=f"arrays: {', '.join(names)}")
        index = names.index(target_name)
    else:
        index = next((i for i, n in enumerate(names) if n.lower() in TARGET_NAMES), len(arrays) - 1)
    target = arrays[index]
    inputs = [a for i, a in enumerate(arrays) if i != index]
    return inputs, target


def check_lengths(named):
    counts = {name: (array.shape[0] if array.ndim else None) for name, array in named}
    if any(c is None for c in counts.values()):
        raise UsageError("scalars cannot be examples: every array needs a leading example axis")
    if len(set(counts.values())) != 1:
        raise UsageError("the arrays hold different numbers of examples: "
                         + ", ".join(f"{n} {c}" for n, c in counts.items()))
    count = next(iter(counts.values()))
    if count == 0:
        raise UsageError("the arrays hold no examples")
    return count


def normalise(name, array):
    """float64 -> float32 (TPUs have no float64), other floats -> float32, integers/bools kept."""
    import numpy as np

    if array.dtype.kind == "f":
        if array.dtype != np.float32:
            print(f"porter: note: {name} is {array.dtype}; stored as float32", file=sys.stderr)
        return array.astype(np.float32)
    if array.dtype.kind in "iub":
        return array
    raise UsageError(f"{name}: dtype {array.dtype} cannot be stored (use floats, integers or booleans)")


def field(name, array, layout=None):
    dtype = "float32" if array.dtype.kind == "f" else ("bool" if array.dtype.kind == "b" else str(array.dtype))
    if dtype.startswith("uint"):
        dtype = "int64"
    entry = {"name": name, "shape": list(array.shape[1:]), "dtype": dtype}
    if layout:
        entry["layout"] = layout
    return entry


def shard_count(requested, total_bytes, shard_mb, hosts, count):
    """--shards as given, else about `shard_mb` per file and (with --hosts) at least SHARDS_PER_HOST per host;
    never more files than examples."""
    shards = requested or max(1, math.ceil(total_bytes / (shard_mb * 1e6)), SHARDS_PER_HOST * (hosts or 0))
    return min(shards, count)


def with_layout(name, array, channels_last):
    """(name, array, layout tag): an NCHW image array as NHWC under --channels-last-io, anything else unchanged."""
    import numpy as np

    if not channels_last or array.ndim != IMAGE_RANK:
        return name, array, None
    return name, np.ascontiguousarray(np.transpose(array, (0, 2, 3, 1))), CHANNELS_LAST


def warn_hosts_without_files(shards, hosts, count):
    """One line on stderr: a pod slice whose hosts cannot each read their own files."""
    remedy = f"pass --shards {SHARDS_PER_HOST * hosts} or more" if count >= hosts else \
        f"the data holds only {count} example(s)"
    print(f"porter: warning: {shards} TFRecord file(s) for {hosts} hosts leave {hosts - shards} host(s) without a "
          f"file of their own (train_tpu.py then reads every file on every host and keeps 1 example in {hosts}); "
          f"{remedy}", file=sys.stderr)


def check_manifest(path, inputs):
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise UsageError(f"{path}: cannot read the manifest ({error})") from None
    main = manifest.get("main_class")
    examples = None
    for source in manifest.get("sources", []):
        for entry in source.get("classes", []):
            if entry.get("name") == main:
                examples = entry.get("example_inputs")
    if not examples:
        return
    if len(examples) != len(inputs):
        raise UsageError(f"{main} takes {len(examples)} input(s); the sources hold {len(inputs)} besides the target",
                         hint="use --target to name the target array")
    for (name, array), example in zip(inputs, examples):
        if list(array.shape[1:]) != list(example["shape"]):
            raise UsageError(f"{name} has example shape {list(array.shape[1:])}; {main} expects "
                             f"{example['shape']} (porter-manifest.json)")


def prepare_out(out, force):
    """Create DIR (local or gs://); a non-empty one only with --force, and then its old shards go."""
    from tensorflow.io import gfile

    if gfile.exists(out) and not gfile.isdir(out):
        raise UsageError(f"{out} exists and is not a directory")
    if gfile.isdir(out) and gfile.listdir(out):
        if not force:
            raise UsageError(f"{out} is not empty", hint="pass --force to replace its TFRecords and schema.json")
        for path in gfile.glob(os.path.join(out, "data-*-of-*.tfrecord")):
            gfile.remove(path)
    gfile.makedirs(out)


def write_text(out, name, text):
    from tensorflow.io import gfile

    with gfile.GFile(os.path.join(out, name), "w") as handle:
        handle.write(text)


# --- writing -----------------------------------------------------------------------------------------------------
def write_shards(out, inputs, target, count, shards):
    import tensorflow as tf

    fields = inputs + [target]
    files = [f"data-{i:05d}-of-{shards:05d}.tfrecord" for i in range(shards)]
    bounds = [round(i * count / shards) for i in range(shards + 1)]
    for shard, name in enumerate(files):
        with tf.io.TFRecordWriter(os.path.join(out, name)) as writer:
            for row in range(bounds[shard], bounds[shard + 1]):
                features = {field_name: _feature(tf, array[row]) for field_name, array in fields}
                example = tf.train.Example(features=tf.train.Features(feature=features))
                writer.write(example.SerializeToString())
    return files


def _feature(tf, value):
    flat = value.reshape(-1)
    if flat.dtype.kind == "f":
        return tf.train.Feature(float_list=tf.train.FloatList(value=flat.tolist()))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=flat.astype("int64").tolist()))
