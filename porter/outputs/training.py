"""Output producer: train_tpu.py (a TPUStrategy training script read from the source's training code),
train_support.py (torch optimizers, schedules and losses on Keras) and requirements-tpu.txt.

The generated files import only TensorFlow, Keras, numpy, the standard library and the model module beside them.
"""

from pathlib import Path

from porter.errors import PorterError
from porter.frontend.source import parse_source
from porter.training.reader import read_training
from porter.training.render import render_outputs


def produce(source, ctx, manifest, options):
    train_source = None
    train_script = getattr(options, "train_script", None)
    if train_script is not None:
        train_source = parse_source(Path(train_script), str(train_script))
    try:
        plan = read_training(source, manifest["main_class"], train_source)
    except (PorterError, RecursionError):
        raise
    except Exception as error:  # noqa: BLE001 - unreadable training code must not stop the conversion
        plan = default_plan(source, manifest["main_class"], train_source,
                            f"porter could not read the training code ({type(error).__name__}: {error}); "
                            f"the script uses defaults chosen from the model's output")
    return render_outputs(plan, source, train_source or source, manifest)


def default_plan(source, main_class, train_source, note):
    """The plan for a file whose training code porter cannot follow: defaults, and a note that says so."""
    from porter.training.losses import default_loss
    from porter.training.optimizers import default_optimizer
    from porter.training.reader import TrainingPlan, _defaults_without_training_code

    plan = TrainingPlan((train_source or source).path.name, False, default_optimizer(), default_loss())
    _defaults_without_training_code(plan, source, main_class)
    plan.notes.append((None, note))
    return plan
