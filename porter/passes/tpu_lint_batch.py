"""TPU lint: a training batch that leaves every slice with a per-core batch that is not a multiple of 8.

The batch size is the one train_tpu.py takes as its default --batch-size (read by porter/training/reader.py), a
global batch split over the cores of the slice it runs on; the line is where the training code writes it (a
DataLoader's batch_size, the first size of the tensor fed to the model, or the --batch-size flag). Which slice the
user trains on is known only when train_tpu.py starts, so a batch that is a multiple of 8 (right on one chip, wrong on
an 8-core slice when it is not a multiple of 64) is checked there, against the real core count; this pass flags the
batches that are wrong everywhere.
"""

import libcst as cst

from porter.errors import PorterError
from porter.passes.tpu_lint_kinds import ASSUMED_REPLICAS, BATCH_ALIGNMENT, round_up
from porter.training import loops
from porter.training.argparse_flags import namespace_names, read_flags
from porter.training.index import SourceIndex
from porter.training.reader import read_training
from porter.training.values import Scope, ValueReader


def lint_batch_size(source, main_class):
    """Findings (line, kind, message, suggestion) about the training code's batch size (none when unknown)."""
    try:
        plan = read_training(source, main_class)
        line = _batch_line(source)
    except PorterError:
        raise
    except Exception:  # noqa: BLE001 - unreadable training code is the training script's note, not the lint's
        return []
    value = plan.batch_size
    if value is None or not value.known or not isinstance(value.value, int) or isinstance(value.value, bool) or \
            value.value <= 0 or line is None:
        return []
    batch = value.value
    if batch % BATCH_ALIGNMENT == 0:
        return []
    group = ASSUMED_REPLICAS * BATCH_ALIGNMENT
    per_core = batch / ASSUMED_REPLICAS
    per_core_text = "less than one example per core" if per_core < 1 else \
        f"{per_core:g} example{'' if per_core == 1 else 's'} per core"
    message = (f"batch size {batch} (train_tpu.py's default --batch-size, read from the training code) is not a "
               f"multiple of {BATCH_ALIGNMENT}: the per-core batch is misaligned on every TPU slice ({batch} on one "
               f"chip, {per_core_text} on an {ASSUMED_REPLICAS}-core slice)")
    suggestion = (f"train with --batch-size {round_up(batch, BATCH_ALIGNMENT)} on one chip, or "
                  f"{round_up(batch, group)} ({round_up(batch, group) // ASSUMED_REPLICAS} per core) on an "
                  f"{ASSUMED_REPLICAS}-core slice (any multiple of {BATCH_ALIGNMENT} x the core count); scale the "
                  f"learning rate with the batch if the recipe needs it")
    return [(line, "mxu-batch-size", message, suggestion)]


def _batch_line(source):
    """Line of the training code that sets the batch size, or None."""
    index = SourceIndex.build(source)
    values = ValueReader(index, namespaces=namespace_names(index))
    values.flags = read_flags(index, values, [])
    backward = loops.find_backward(index)
    if backward is None:
        return None
    info = loops.analyse(index, values, backward)
    found = info.batch_size or loops.batch_of_model_call(index, values, info, _model_variables(index, values,
                                                                                               source))
    if found is not None:
        return index.line(found[0])
    flag = values.flags.get("batch_size")
    return flag.line if flag is not None else None


def _model_variables(index, values, source):
    """Names the training code binds to a model built from one of the file's classes."""
    names = set()
    for assignment in index.assignments:
        node, _ = values.resolve_object(assignment.value, Scope(assignment.function), follow_calls=False)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in source.classes:
            names.add(assignment.target)
    return names
