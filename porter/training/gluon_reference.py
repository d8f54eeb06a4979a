"""Reference training steps for Gluon sources from real mxnet 1.9.1 (its own venv, by subprocess): the source's
gluon.Trainer and loss run a few steps on given batches; the parity tests run train_tpu.py's step beside them.

Like porter/verify/mxnet_reference.py (whose driver and venv it uses), porter never imports mxnet itself.
"""

from dataclasses import dataclass
from pathlib import Path

from porter.verify import mxnet_reference


@dataclass(frozen=True)
class GluonTraining:
    """What mxnet computed: the initial parameters (save_parameters names), per step the mean and the sum of the
    per-sample losses and the learning rate, and every parameter after each step."""

    initial: dict
    mean_losses: list
    sum_losses: list
    learning_rates: list
    states: list  # [{name: array}] after step 0, 1, ...


def run_gluon_training(model_path, class_name, inputs, labels, *, trainer, loss, steps, step_size=None, reduce=None,
                       clip_global_norm=None, setup=None, init_kwargs=None, seed=0, train_mode=False,
                       load_parameters=None, perturb=True, python=None, timeout=600):
    """Build `class_name(**init_kwargs)` in mxnet (seeded; `load_parameters` if given; `perturb` moves the biases
    off zero) and the statements `setup` (lr_mult / wd_mult settings), then run `steps` steps of
    `with autograd.record(): l = loss(net(x), y)`; `l.backward()` (or its mean/sum: `reduce`);
    `gluon.utils.clip_global_norm(grads, clip_global_norm)` when given; `trainer.step(step_size or batch)`, with
    `trainer` and `loss` given as the source's expressions (`net` names the model). `inputs`/`labels`: lists of
    numpy batches, step i takes batch i modulo their count."""
    train = {"trainer": trainer, "loss": loss, "steps": int(steps), "step_size": step_size, "reduce": reduce,
             "clip_global_norm": clip_global_norm, "setup": setup, "train_mode": bool(train_mode),
             "inputs": "inputs.npz", "labels": "labels.npz"}
    request = {"model_path": str(Path(model_path).resolve()), "class_name": class_name,
               "init_kwargs": init_kwargs or {}, "seed": seed, "perturb": bool(perturb),
               "load_parameters": None if load_parameters is None else str(Path(load_parameters).resolve()),
               "train": train}
    archives = {"inputs.npz": inputs, "labels.npz": labels}
    with mxnet_reference.driven(request, archives, model_path, python=python, timeout=timeout) as scratch:
        initial = mxnet_reference.load_archive(scratch / "parameters.npz")
        losses = mxnet_reference.load_archive(scratch / "train_losses.npz")
        flat = mxnet_reference.load_archive(scratch / "train_parameters.npz")
    states = [{} for _ in range(steps)]
    for key, value in flat.items():
        step, _, name = key.partition("/")
        states[int(step.removeprefix("step"))][name] = value
    return GluonTraining(initial, [float(losses[f"mean_{i}"]) for i in range(steps)],
                         [float(losses[f"sum_{i}"]) for i in range(steps)],
                         [float(losses[f"lr_{i}"]) for i in range(steps)], states)
