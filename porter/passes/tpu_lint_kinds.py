"""The kinds of TPU lint finding: an id, a short label for summaries, and why the construct hurts on TPU.

The reason texts are what PORTING.md and report.html show next to each finding, so they say what happens on a TPU
and where porter's own checks come from (XLA on CPU compiles with the same front end as on TPU).
"""

from dataclasses import dataclass

FEATURE_ALIGNMENT = 128  # MXU tile width (TPU v2-v5): feature dimensions are padded up to a multiple of it
MIN_FLAGGED_FEATURES = 128  # smaller layers (3 input channels, 10 classes) are normal and never flagged
MIN_FLAGGED_WASTE = 0.05  # a size is flagged when padding it wastes at least this share of the padded size
BATCH_ALIGNMENT = 8  # the batch is the second-minor dimension of activations: tiled by 8 rows
ASSUMED_REPLICAS = 8  # cores of a v2-8/v3-8 slice, chips of a v5e-8: the example slice the suggestions size for


@dataclass(frozen=True)
class LintKind:
    id: str
    label: str  # shown in the convert summary: "TPU lint: 3 findings (host sync 1, float64 2)"
    why: str


KINDS = {kind.id: kind for kind in (
    LintKind("data-dependent-shape", "data-dependent shape",
             "the result's size depends on tensor values (nonzero, masked_select, boolean-mask indexing, unique, "
             "one-argument where): XLA needs every shape at compile time, so the TF port either fails to compile "
             "(\"must be a compile-time constant\") or produces a bounded-dynamic shape that later ops reject"),
    LintKind("tensor-control-flow", "control flow on tensor values",
             "a Python `if`/`while` on a tensor value needs the value on the host: under `tf.function` and XLA "
             "Keras 3 does not AutoGraph-convert `call`, so it raises OperatorNotAllowedInGraphError (in torch_xla "
             "it forces a device-to-host sync and a recompile per branch)"),
    LintKind("host-sync", "host sync",
             "reading a tensor's value on the host (`.item()`, `.tolist()`, `.numpy()`, printing it) stops the TPU "
             "until the value arrives; inside a compiled TF step `.numpy()` raises and printing shows a symbolic "
             "tensor, not its value"),
    LintKind("float64", "float64",
             "TPUs have no float64 arithmetic: XLA emulates it (or rejects it) at a large cost in speed and memory; "
             "TPU training runs in float32 and bfloat16"),
    LintKind("int64-index-math", "int64 index math",
             "TPUs compute natively in 32-bit integers: int64 arithmetic is emulated with pairs of int32 values, "
             "doubling memory and slowing every index computation"),
    LintKind("xla-unsupported-op", "op XLA cannot compile",
             "the op has no XLA lowering on TPU, or its output size depends on the data; the list is small and "
             "checked: histc (tf.histogram_fixed_width fails jit_compile on CPU too), bincount without minlength "
             "(output length is max(value) + 1), linalg.eig/eigvals (XLA implements nonsymmetric "
             "eigendecomposition on CPU only), topk/kthvalue with k taken from tensor values (XLA's TopK needs a "
             "static k); torch has no string tensors, so TF's string ops never come from a torch source"),
    LintKind("recompiling-shape", "recompiling shape",
             "a size taken from the data (a slice up to `lengths.max()`, packed variable-length sequences): every "
             "new value is a new shape, so XLA recompiles the step for each batch (minutes each on TPU), or the TF "
             "port fails to compile when the size is a tensor"),
    LintKind("mxu-feature-size", "MXU waste",
             f"the TPU matrix unit works on {FEATURE_ALIGNMENT}-wide tiles: a feature, channel or hidden size that is "
             f"not a multiple of {FEATURE_ALIGNMENT} is padded up to one, and the padding is computed and stored "
             f"for nothing (flagged only for sizes of at least {MIN_FLAGGED_FEATURES} whose padding wastes at "
             f"least {MIN_FLAGGED_WASTE:.0%}; small layers such as 3 input channels or 10 classes are normal)"),
    LintKind("mxu-batch-size", "MXU waste",
             f"activations are tiled {BATCH_ALIGNMENT} rows at a time, so a per-core batch that is not a multiple of "
             f"{BATCH_ALIGNMENT} leaves rows of every tile empty; train_tpu.py splits --batch-size over the cores of "
             f"the slice it runs on, so a batch that is not a multiple of {BATCH_ALIGNMENT} is misaligned on every "
             f"slice (flagged here), and one that is misaligned only on larger slices ({ASSUMED_REPLICAS} cores of a "
             f"v2-8, v3-8 or v5e-8) is reported by train_tpu.py when it starts on one"),
)}


def round_up(value, multiple):
    return -(-value // multiple) * multiple


def count_text(kinds):
    """'3 findings (host sync 1, float64 2)' for the kind ids of some findings, or None when there are none."""
    if not kinds:
        return None
    counts = {}
    for kind in kinds:
        label = KINDS[kind].label if kind in KINDS else kind
        counts[label] = counts.get(label, 0) + 1
    parts = ", ".join(f"{label} {count}" for label, count in counts.items())
    return f"{len(kinds)} finding{'' if len(kinds) == 1 else 's'} ({parts})"


def summary_line(findings):
    """`porter convert`'s line: 'TPU lint: 3 findings (host sync 1, float64 2); see PORTING.md', or None.

    `findings` are manifest entries (dicts with "kind") or TpuFinding objects."""
    text = count_text([f["kind"] if isinstance(f, dict) else f.kind for f in findings])
    return f"TPU lint: {text}; see PORTING.md" if text else None
