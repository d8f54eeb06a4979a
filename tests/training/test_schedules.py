"""Learning-rate schedules match torch's at every step of the first 100; optimizers match torch over many steps.

The schedule, the optimizer and whether the source steps the scheduler per batch or per epoch all come from
training code that porter reads; the torch reference executes the same code.
"""

import numpy as np
import pytest

from tests.training.helpers import change_error, keras_from_torch, state_entries, torch_namespace

EPOCH_SOURCE = '''"""Epoch-structured training code for the tiny model."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from {module} import Tiny


def main():
    model = Tiny()
    data = TensorDataset(torch.randn(24, 2, 4, 4), torch.randint(0, 4, (24,)))
    loader = DataLoader(data, batch_size=8, shuffle=True)
    criterion = nn.CrossEntropyLoss()
{setup}
    for epoch in range(10):
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        scheduler.step()


if __name__ == "__main__":
    main()
'''

SGD = "optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)"
SCHEDULES = {
    "step": "torch.optim.lr_scheduler.StepLR(optimizer, step_size=7, gamma=0.5)",
    "multistep": "torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[10, 30, 60], gamma=0.3)",
    "exponential": "torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.97)",
    "cosine": "torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=40, eta_min=1e-3)",
    "onecycle": "torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, total_steps=100)",
    "onecycle_linear_three_phase": "torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, epochs=10, "
                                   "steps_per_epoch=10, anneal_strategy='linear', three_phase=True)",
    "linear_warmup": "torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=20)",
    "constant": "torch.optim.lr_scheduler.ConstantLR(optimizer, factor=0.5, total_iters=10)",
    "polynomial": "torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=50, power=2.0)",
    "sequential": "torch.optim.lr_scheduler.SequentialLR(optimizer, [torch.optim.lr_scheduler.LinearLR(optimizer, "
                  "start_factor=0.1, total_iters=10), torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, "
                  "T_max=90)], milestones=[10])",
    "lambda": "torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 10) * 0.95 ** s)",
    "lambda_warmup_cosine_def": "torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_cosine)",
}
WARMUP_COSINE = '''
def warmup_cosine(step):
    if step < 10:
        return float(step + 1) / 10
    progress = float(step - 10) / float(max(1, 90))
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))
'''


def torch_schedule(tiny, setup, steps, steps_per_epoch=1):
    """torch's learning rate (and momentum) in force at each optimizer step."""
    import torch

    model = tiny.torch_module.Tiny()
    namespace = torch_namespace(model)
    exec(setup, namespace)
    optimizer, scheduler = namespace["optimizer"], namespace["scheduler"]
    lrs, momenta = [], []
    for step in range(steps):
        group = optimizer.param_groups[0]
        lrs.append(group["lr"])
        momenta.append(group.get("momentum"))
        for p in model.parameters():
            p.grad = torch.zeros_like(p)
        optimizer.step()
        if (step + 1) % steps_per_epoch == 0:
            scheduler.step()
    return np.array(lrs), momenta


def keras_schedule(optimizer, steps):
    lrs, momenta = [], []
    schedule = optimizer.learning_rate  # noqa: F841  (property: evaluated at optimizer.iterations)
    for step in range(steps):
        optimizer.iterations.assign(step)
        lrs.append(float(optimizer.learning_rate))
        momenta.append(float(optimizer.scheduled_momentum(optimizer.momentum)) if hasattr(optimizer, "momentum")
                       else None)
    return np.array(lrs), momenta


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_matches_torch_for_100_steps(tiny_models, tmp_path, name):
    tiny = tiny_models["logits"]
    setup = f"{SGD}\n{WARMUP_COSINE if 'warmup_cosine' in name else ''}\nscheduler = {SCHEDULES[name]}\n" \
            "criterion = nn.CrossEntropyLoss()"
    train, _ = tiny.training_script(tmp_path, setup, "criterion(out, y)", schedule_step="scheduler.step()")
    text = (tmp_path / "train_tpu.py").read_text()
    assert "stepped with every batch" in text
    optimizer = train.build_optimizer()
    optimizer.build(train.build_model().trainable_variables)
    expected, expected_momenta = torch_schedule(tiny, setup, 100)
    got, momenta = keras_schedule(optimizer, 100)
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=1e-8)
    if name.startswith("onecycle"):  # OneCycleLR also cycles SGD's momentum
        np.testing.assert_allclose(momenta, expected_momenta, rtol=1e-5)


def test_per_epoch_schedule_advances_once_per_epoch(tiny_models, tmp_path):
    tiny = tiny_models["logits"]
    setup = f"{SGD}\nscheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)"
    path = tmp_path / "train.py"
    path.write_text(EPOCH_SOURCE.format(module=tiny.module_name, setup="    " + setup.replace("\n", "\n    ")))
    from porter.frontend.source import parse_source
    from porter.outputs.training import produce

    options = type("Options", (), {"train_script": path})()
    files = produce(parse_source(tiny.source), None, tiny.manifest, options)
    text = files["train_tpu.py"]
    assert "stepped once per epoch" in text
    assert "SOURCE_EXAMPLES = 24" in text and "DEFAULT_BATCH_SIZE = 8" in text and "DEFAULT_EPOCHS = 10" in text
    for name, content in files.items():
        (tmp_path / name).write_text(content)
    module_file = tiny.manifest["sources"][0]["module"]
    for name in (module_file, module_file.removesuffix(".py") + "_runtime.py"):  # the model and its runtime
        (tmp_path / name).write_text((tiny.out / name).read_text())
    from tests.training.helpers import load_module

    train = load_module(tmp_path / "train_tpu.py")
    assert train.steps_per_epoch_for(8) == 3
    optimizer = train.build_optimizer(steps_per_epoch=3)
    optimizer.build(train.build_model().trainable_variables)
    expected, _ = torch_schedule(tiny, setup, 100, steps_per_epoch=3)
    got, _ = keras_schedule(optimizer, 100)
    np.testing.assert_allclose(got, expected, rtol=2e-5)


def _trajectory(tiny, tmp_path, setup, steps, schedule_step=""):
    """Parameters after `steps` optimizer steps on a fixed sequence of batches: torch vs train_tpu.py."""
    import tensorflow as tf
    import torch

    train, _ = tiny.training_script(tmp_path, setup + "\ncriterion = nn.CrossEntropyLoss()", "criterion(out, y)",
                                    schedule_step=schedule_step)
    torch.manual_seed(0)
    tmodel = tiny.torch_module.Tiny()
    tmodel.eval()
    kmodel = keras_from_torch(train, tmodel)
    namespace = torch_namespace(tmodel)
    exec(setup, namespace)
    optimizer, scheduler = namespace["optimizer"], namespace.get("scheduler")
    koptimizer = train.build_optimizer(kmodel)
    koptimizer.build(kmodel.trainable_variables)
    loss_fn = train.build_loss()
    step = tf.function(lambda x, y: train.train_step(kmodel, koptimizer, loss_fn, x, y, training=False))
    rng = np.random.default_rng(1)
    start = {n: p.detach().numpy().copy() for n, p in tmodel.named_parameters()}
    for _ in range(steps):
        x = rng.standard_normal((8, 2, 4, 4)).astype(np.float32)
        y = rng.integers(0, 4, size=(8,))
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(tmodel(torch.from_numpy(x)), torch.from_numpy(y)).backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        step(tf.constant(x), tf.constant(y))
    return change_error(tmodel, start, state_entries(train, kmodel))


def test_nan_or_inf_parameters_fail_the_trajectory_comparison(tiny_models, tmp_path):
    """The comparison cannot pass on broken parameters: NaN/Inf masks first (max() alone would drop a NaN)."""
    import torch

    tiny = tiny_models["logits"]
    train, _ = tiny.training_script(tmp_path, "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
                                    "F.cross_entropy(out, y)")
    torch.manual_seed(0)
    tmodel = tiny.torch_module.Tiny()
    kmodel = keras_from_torch(train, tmodel)
    start = {n: p.detach().numpy().copy() for n, p in tmodel.named_parameters()}
    entries = state_entries(train, kmodel)
    assert change_error(tmodel, start, entries) == 0.0
    for bad in (np.nan, np.inf):
        for name in start:
            variable = entries[name][0]
            variable.assign(np.full(variable.shape, bad, variable.dtype))
        assert change_error(tmodel, start, entries) == np.inf, bad


def test_sgd_momentum_with_steplr_matches_torch_over_100_steps(tiny_models, tmp_path):
    """Keras' SGD keeps an lr-scaled velocity and drifts from torch once the lr changes; train_support's does not."""
    setup = ("optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-3)\n"
             "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)")
    worst = _trajectory(tiny_models["logits"], tmp_path, setup, 100, schedule_step="scheduler.step()")
    assert worst < 1e-3, worst


TRAJECTORIES = {
    "sgd_dampening": "torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, dampening=0.3)",
    "adam_amsgrad": "torch.optim.Adam(model.parameters(), lr=1e-2, amsgrad=True, weight_decay=1e-2)",
    "adamw": "torch.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.95))",
    "adadelta": "torch.optim.Adadelta(model.parameters())",
    "adagrad": "torch.optim.Adagrad(model.parameters(), lr=0.05, lr_decay=0.05, initial_accumulator_value=0.1)",
    "rmsprop": "torch.optim.RMSprop(model.parameters(), lr=1e-3, momentum=0.9)",
}


@pytest.mark.parametrize("name", sorted(TRAJECTORIES))
def test_optimizer_matches_torch_over_20_steps(tiny_models, tmp_path, name):
    worst = _trajectory(tiny_models["logits"], tmp_path, f"optimizer = {TRAJECTORIES[name]}", 20)
    assert worst < 1e-3, worst
