"""Output producer: train_tpu.py (a TPUStrategy training script read from the source's training code),
train_support.py (torch optimizers, schedules and losses on Keras) and requirements-tpu.txt.

The generated files import only TensorFlow, Keras, numpy, the standard library and the model module beside them.
"""

from pathlib import Path

from porter.frontend.source import parse_source
from porter.training.reader import read_training
from porter.training.render import render_outputs


def produce(source, ctx, manifest, options):
    train_source = None
    train_script = getattr(options, "train_script", None)
    if train_script is not None:
        train_source = parse_source(Path(train_script), str(train_script))
    plan = read_training(source, manifest["main_class"], train_source)
    return render_outputs(plan, source, train_source or source, manifest)
