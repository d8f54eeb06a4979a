"""Gluon training code -> train_tpu.py, step for step against real mxnet 1.9.1.

A tiny Gluon model is written with its training code (gluon.Trainer, a gluon.loss, the autograd.record loop),
converted by porter, and trained a few steps both in mxnet (the same Trainer and loss expressions, through
porter/verify/mxnet_driver.py in .venv-mxnet) and through the generated train_tpu.py's train_step from the same
initial parameters and batches. Losses and parameters are compared after every step: the losses within 1e-5
relative, the parameters within 1e-5 of their tensor's scale, their change since the start within 1e-3 of its own
scale (a much stricter look at the update rule), the learning rate each step used within 1e-6. Parameters are judged
where the gradient is above round-off (GRADIENT_FLOOR); the worst error over all elements is printed beside it.
Reading variants at the end need no mxnet.
"""

import re
import subprocess
import sys

import numpy as np
import pytest

from tests.mxnet.gluon_fixtures import GLUON_FIXTURES_DIR, needs_mxnet
from tests.training.helpers import REPO, convert_source, load_module

MODEL_SOURCE = '''"""A tiny Gluon model and its training loop, for porter's Gluon training tests."""

import mxnet as mx
from mxnet import autograd, gluon
from mxnet.gluon import nn


class TinyNet(gluon.HybridBlock):
    def __init__(self, classes=4, **kwargs):
        super(TinyNet, self).__init__(**kwargs)
        with self.name_scope():
            self.conv = nn.Conv2D(3, 3, padding=1, in_channels=2)
            self.fc1 = nn.Dense(12, in_units=48, activation="tanh")
            self.fc2 = nn.Dense(classes, in_units=12)

    def hybrid_forward(self, F, x):
        x = F.relu(self.conv(x))
        return {head}


if __name__ == "__main__":
    net = TinyNet()
    net.initialize()
    {setup}trainer = {trainer}
    loss_fn = {loss}
    x = mx.nd.random.normal(shape=(8, 2, 4, 4))
    y = mx.nd.random.randint(0, 4, shape=(8,))
    for step in range(5):
        with autograd.record():
            {record}
        loss.backward()
        {clip}trainer.step({step_size})
'''
HEADS = {"logits": "self.fc2(self.fc1(x))", "log_softmax": "F.log_softmax(self.fc2(self.fc1(x)))",
         "sigmoid": "F.sigmoid(self.fc2(self.fc1(x)))",
         "per_position": "F.reshape(self.fc2(self.fc1(x)), (-1, 2, 2))"}  # 2 classes on axis 1 at 2 positions


def trainer(optimizer, params):
    return f"gluon.Trainer(net.collect_params(), {optimizer!r}, {params})"


OPTIMIZERS = {
    "sgd": trainer("sgd", "{'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}"),
    "sgd_clip_rescale": trainer("sgd", "{'learning_rate': 0.5, 'momentum': 0.8, 'wd': 0.05, 'clip_gradient': 0.05, "
                                       "'rescale_grad': 2.0}"),
    "sgd_plain": trainer("sgd", "{'learning_rate': 0.2, 'wd': 0.01}"),
    "adam": trainer("adam", "{'learning_rate': 0.01, 'beta1': 0.8, 'beta2': 0.99, 'epsilon': 1e-6, 'wd': 0.01}"),
    "adam_clip": trainer("adam", "{'learning_rate': 0.01, 'wd': 0.1, 'clip_gradient': 0.02}"),
    "nag": trainer("nag", "{'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}"),
    "nag_clip": trainer("nag", "{'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.05, 'clip_gradient': 0.05}"),
    "rmsprop": trainer("rmsprop", "{'learning_rate': 0.01, 'gamma1': 0.8, 'epsilon': 1e-6, 'wd': 0.01}"),
    "adagrad": trainer("adagrad", "{'learning_rate': 0.05, 'wd': 0.01, 'eps': 1e-6, 'clip_gradient': 0.1}"),
    "adadelta": trainer("adadelta", "{'rho': 0.8, 'wd': 0.01, 'rescale_grad': 3.0}"),
    "adamax": trainer("adamax", "{'learning_rate': 0.01, 'beta1': 0.8, 'wd': 0.01, 'clip_gradient': 0.1}"),
    "nadam": trainer("nadam", "{'learning_rate': 0.01, 'beta2': 0.99, 'wd': 0.01, 'schedule_decay': 0.01}"),
    "signum": trainer("signum", "{'learning_rate': 0.01, 'momentum': 0.8, 'wd': 0.01, 'wd_lh': 0.1, "
                                "'clip_gradient': 0.2}"),
    "signsgd": trainer("signum", "{'learning_rate': 0.01, 'momentum': 0.0, 'wd': 0.05, 'rescale_grad': 2.0}"),
    "ftml": trainer("ftml", "{'learning_rate': 0.02, 'beta1': 0.5, 'wd': 0.01, 'clip_gradient': 0.1}"),
    "lamb": trainer("lamb", "{'learning_rate': 0.01, 'wd': 0.01, 'lower_bound': 0.5, 'upper_bound': 2.0, "
                            "'rescale_grad': 2.0}"),
    "lamb_uncorrected": trainer("lamb", "{'learning_rate': 0.01, 'beta1': 0.8, 'bias_correction': False, "
                                        "'clip_gradient': 0.05}"),
    "rmsprop_centered": trainer("rmsprop", "{'learning_rate': 0.01, 'gamma1': 0.9, 'gamma2': 0.8, 'centered': True, "
                                           "'wd': 0.01, 'clip_gradient': 0.1}"),
}
# name -> (model head, loss expression, label kind)
LOSSES = {
    "softmax_ce": ("logits", "gluon.loss.SoftmaxCrossEntropyLoss()", "class"),
    "softmax_ce_dense": ("logits", "gluon.loss.SoftmaxCrossEntropyLoss(sparse_label=False, weight=0.7)", "probs"),
    "softmax_ce_from_logits": ("log_softmax", "gluon.loss.SoftmaxCELoss(from_logits=True)", "class"),
    "l2": ("logits", "gluon.loss.L2Loss()", "regression"),
    "l2_weighted": ("logits", "gluon.loss.L2Loss(weight=0.5)", "regression"),
    "l1": ("logits", "gluon.loss.L1Loss()", "regression"),
    "sigmoid_bce": ("logits", "gluon.loss.SigmoidBCELoss()", "binary"),
    "sigmoid_bce_probs": ("sigmoid", "gluon.loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=True)", "binary"),
    "huber": ("logits", "gluon.loss.HuberLoss(rho=0.5)", "regression"),
    "softmax_ce_axis_1": ("per_position", "gluon.loss.SoftmaxCrossEntropyLoss(axis=1)", "positions"),
}
MOMENTUM_SGD = "{'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01, 'lr_scheduler': %s}"
SCHEDULES = {
    "factor": trainer("sgd", MOMENTUM_SGD % "mx.lr_scheduler.FactorScheduler(step=2, factor=0.5)"),
    "factor_warmup": trainer("sgd", MOMENTUM_SGD % "mx.lr_scheduler.FactorScheduler(3, 0.5, base_lr=0.2, "
                                                   "warmup_steps=2, warmup_begin_lr=0.01)"),
    "multifactor": trainer("sgd", MOMENTUM_SGD % "mx.lr_scheduler.MultiFactorScheduler(step=[2, 4], factor=0.3)"),
    "cosine_warmup": trainer("sgd", "{'momentum': 0.9, 'lr_scheduler': mx.lr_scheduler.CosineScheduler("
                                    "max_update=5, base_lr=0.1, final_lr=0.01, warmup_steps=2)}"),
    "poly_adam": trainer("adam", "{'learning_rate': 0.004, 'lr_scheduler': mx.lr_scheduler.PolyScheduler(4, "
                                 "base_lr=0.01, pwr=2, final_lr=0.001)}"),
    "constant_warmup_nag": trainer("nag", "{'momentum': 0.5, 'lr_scheduler': mx.lr_scheduler.FactorScheduler("
                                          "step=10, base_lr=0.1, warmup_steps=3, warmup_mode='constant', "
                                          "warmup_begin_lr=0.02)}"),
}
PARAMETER_TOLERANCE = 1e-5  # of the parameter's scale
UPDATE_TOLERANCE = 1e-3  # of the scale of the parameter's change since the start
LOSS_TOLERANCE = 1e-5
# Parameters are judged where every step's gradient is at least this fraction of its tensor's largest: below it the
# gradient is round-off of both frameworks, and Adam/RMSProp turn round-off into O(lr) steps (g / (|g| + eps)).
GRADIENT_FLOOR = 1e-4


def labels(kind, rng, n=8, classes=4):
    if kind == "class":
        return rng.integers(0, classes, size=(n,)).astype(np.float32)
    if kind == "probs":
        raw = rng.random((n, classes)).astype(np.float32)
        return raw / raw.sum(axis=1, keepdims=True)
    if kind == "positions":
        return rng.integers(0, 2, size=(n, 2)).astype(np.float32)
    if kind == "binary":
        return (rng.random((n, classes)) > 0.5).astype(np.float32)
    return rng.standard_normal((n, classes)).astype(np.float32)


class GluonCase:
    """One tiny Gluon source: written, converted, its train_tpu.py loaded."""

    def __init__(self, root, name, trainer_code, loss_code, head="logits", record=None, step_size="x.shape[0]",
                 clip="", setup=""):
        self.root = root / name
        self.root.mkdir(parents=True)
        self.trainer, self.loss = trainer_code, loss_code
        self.record = record or "loss = loss_fn(net(x), y)"
        self.source = self.root / "tiny_gluon.py"
        self.source.write_text(MODEL_SOURCE.format(head=HEADS[head], trainer=trainer_code, loss=loss_code,
                                                   record=self.record, step_size=step_size, clip=clip,
                                                   setup=setup))
        self.setup = setup.replace("\n    ", "\n")
        self.out = self.root / "out"
        self.manifest = convert_source(self.source, self.out)
        self.train = load_module(self.out / "train_tpu.py")
        self.text = (self.out / "train_tpu.py").read_text()


def run_pair(case, kind, steps, seed=0, step_size=None, reduce=None, batches=2, clip_global_norm=None):
    """The same steps in mxnet and through train_tpu.train_step; returns the worst errors and the figures."""
    import tensorflow as tf

    from porter.training.gluon_reference import run_gluon_training

    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal((8, 2, 4, 4)).astype(np.float32) for _ in range(batches)]
    ys = [labels(kind, rng) for _ in range(batches)]
    reference = run_gluon_training(case.source, "TinyNet", xs, ys, trainer=case.trainer, loss=case.loss,
                                   steps=steps, step_size=step_size, reduce=reduce, seed=seed,
                                   clip_global_norm=clip_global_norm, setup=case.setup or None)
    train = case.train
    model = train.build_model()
    model(tf.zeros((1, 2, 4, 4)), training=False)
    train.model_lib.load_state_dict(model, reference.initial)
    optimizer = train.build_optimizer(model)
    optimizer.build(model.trainable_variables)
    loss_fn = train.build_loss()
    entries = {e.key: (e.variable, e.to_keras or (lambda a: a)) for e in train.model_lib.collect_state(model)}
    start = {name: np.array(variable.numpy()) for name, (variable, _) in entries.items()}
    step_function = tf.function(lambda x, y: train.train_step(model, optimizer, loss_fn, x, y, training=False),
                                jit_compile=True)
    variables = model.trainable_variables
    names = {id(variable): name for name, (variable, _) in entries.items()}
    kept = {name: np.ones(variable.shape, bool) for name, (variable, _) in entries.items()}
    errors = {"loss": 0.0, "parameters": 0.0, "updates": 0.0, "lr": 0.0, "parameters_all_elements": 0.0}
    expected_losses = reference.sum_losses if reduce is None and step_size == 1 else reference.mean_losses
    losses = []
    for step in range(steps):
        schedule = optimizer._learning_rate
        lr_used = float(schedule(step)) if isinstance(schedule, tf.keras.optimizers.schedules.LearningRateSchedule) \
            else float(optimizer.learning_rate)
        x, y = tf.constant(xs[step % batches]), tf.constant(ys[step % batches])
        _, _, gradients = train.compute_gradients(model, loss_fn, x, y, training=False)
        for index, gradient in gradients.items():  # judged where the gradient is above round-off (see GRADIENT_FLOOR)
            gradient = np.abs(gradient.numpy())
            kept[names[id(variables[index])]] &= gradient >= GRADIENT_FLOOR * max(float(gradient.max()), 1e-30)
        value = float(step_function(x, y))
        losses.append(value)
        errors["loss"] = max(errors["loss"], abs(value - expected_losses[step]) / max(abs(expected_losses[step]),
                                                                                      1e-12))
        errors["lr"] = max(errors["lr"], abs(lr_used - reference.learning_rates[step]) /
                           max(abs(reference.learning_rates[step]), 1e-12))
        for name, expected in reference.states[step].items():
            variable, to_keras = entries[name]
            actual = variable.numpy()
            expected = to_keras(expected)
            mask = kept[name]
            scale = max(float(np.max(np.abs(expected))), 1e-12)
            difference = np.abs(actual - expected)
            errors["parameters_all_elements"] = max(errors["parameters_all_elements"], float(difference.max()) / scale)
            if mask.any():
                errors["parameters"] = max(errors["parameters"], float(difference[mask].max()) / scale)
            change, keras_change = expected - to_keras(reference.initial[name]), actual - start[name]
            change_scale = float(np.max(np.abs(change)))
            if change_scale > 0 and mask.any():
                errors["updates"] = max(errors["updates"],
                                        float(np.max(np.abs(change - keras_change)[mask])) / change_scale)
    return errors, losses, expected_losses


def check(errors):
    print(errors)
    assert errors["loss"] <= LOSS_TOLERANCE, errors
    assert errors["parameters"] <= PARAMETER_TOLERANCE, errors
    assert errors["updates"] <= UPDATE_TOLERANCE, errors
    assert errors["lr"] <= 1e-6, errors


@needs_mxnet
@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_optimizers_match_mxnet(tmp_path, optimizer):
    case = GluonCase(tmp_path, optimizer, OPTIMIZERS[optimizer], "gluon.loss.SoftmaxCrossEntropyLoss()")
    name = re.search(r"'(\w+)'", OPTIMIZERS[optimizer]).group(1)
    classes = {"sgd": "SGD", "nag": "NAG", "adam": "Adam", "rmsprop": "RMSProp", "adagrad": "AdaGrad",
               "adadelta": "AdaDelta", "adamax": "Adamax", "nadam": "Nadam", "signum": "Signum", "ftml": "FTML",
               "lamb": "LAMB"}
    assert f"support.Gluon{classes[name]}(" in case.text
    errors, _, _ = run_pair(case, "class", steps=3)
    check(errors)


def test_sgld_train_step_is_seeded_under_xla(tmp_path):
    """train_tpu.py's SGLD step compiles under XLA, moves every parameter (drift plus noise) and repeats with the
    optimizer's seed; its parity with mxnet is tests/training/test_gluon_support_optimizers.py's (noise replayed)."""
    import tensorflow as tf

    case = GluonCase(tmp_path, "sgld", trainer("sgld", "{'learning_rate': 0.01, 'wd': 0.01}"),
                     "gluon.loss.SoftmaxCrossEntropyLoss()")
    assert "support.GluonSGLD(" in case.text
    x = tf.constant(np.random.default_rng(0).standard_normal((8, 2, 4, 4)).astype(np.float32))
    y = tf.constant(labels("class", np.random.default_rng(1)))

    def train(seed_offset=0):
        tf.keras.utils.set_random_seed(0)
        model = case.train.build_model()
        model(tf.zeros((1, 2, 4, 4)), training=False)
        optimizer = case.train.build_optimizer(model)
        optimizer.seed += seed_offset
        loss_fn = case.train.build_loss()
        start = [v.numpy() for v in model.trainable_variables]
        step = tf.function(lambda a, b: case.train.train_step(model, optimizer, loss_fn, a, b, training=False),
                           jit_compile=True)
        for _ in range(2):
            assert np.isfinite(float(step(x, y)))
        return start, [v.numpy() for v in model.trainable_variables]

    start, first = train()
    _, again = train()
    _, other = train(seed_offset=1)
    assert all(np.all(a != b) for a, b in zip(start, first))  # N(0, lr) noise reaches every element
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not any(np.array_equal(a, b) for a, b in zip(first, other))


@needs_mxnet
@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_losses_match_mxnet(tmp_path, loss):
    head, code, kind = LOSSES[loss]
    case = GluonCase(tmp_path, loss, OPTIMIZERS["sgd"], code, head=head)
    errors, _, _ = run_pair(case, kind, steps=2)
    check(errors)


@needs_mxnet
@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
def test_schedules_match_mxnet(tmp_path, schedule):
    case = GluonCase(tmp_path, schedule, SCHEDULES[schedule], "gluon.loss.SoftmaxCrossEntropyLoss()")
    assert "schedule = support." in case.text
    errors, _, _ = run_pair(case, "class", steps=6)
    check(errors)


REDUCTIONS = {  # name -> (the record block, trainer.step's argument, the driver's reduce)
    "mean_step_1": ("loss = loss_fn(net(x), y).mean()", "1", "mean"),
    "sum_step_1": ("loss = loss_fn(net(x), y)", "1", None),
    "step_literal_batch": ("loss = loss_fn(net(x), y)", "8", None),
}


@needs_mxnet
@pytest.mark.parametrize("reduction", sorted(REDUCTIONS))
def test_loss_reductions_match_mxnet(tmp_path, reduction):
    record, step_size, reduce = REDUCTIONS[reduction]
    case = GluonCase(tmp_path, reduction, OPTIMIZERS["adam"], "gluon.loss.SoftmaxCrossEntropyLoss()",
                     record=record, step_size=step_size)
    assert ('SoftmaxCrossEntropyLoss(reduction="sum"' in case.text) == (reduction == "sum_step_1")
    errors, _, _ = run_pair(case, "class", steps=3, step_size=int(step_size), reduce=reduce)
    check(errors)


CLIP = ("grads = [p.grad() for p in net.collect_params().values()]\n"
        "        gluon.utils.clip_global_norm(grads, 0.05)\n        ")


@needs_mxnet
@pytest.mark.parametrize("step_size", ["x.shape[0]", "1"])
def test_clip_global_norm_matches_mxnet(tmp_path, step_size):
    """clip_global_norm clips the summed gradients before trainer.step divides them by the batch size."""
    case = GluonCase(tmp_path, "clip", OPTIMIZERS["sgd"], "gluon.loss.SoftmaxCrossEntropyLoss()", step_size=step_size,
                     clip=CLIP)
    expected = "support.clip_global_norm(gradients, max_norm=0.05" + (", scale=CLIP_SCALE)" if step_size != "1" else
                                                                       ")")
    assert expected in case.text
    errors, _, _ = run_pair(case, "class", steps=3, clip_global_norm=0.05, step_size=None if step_size != "1" else 1)
    check(errors)


MULTIPLIERS = ("net.collect_params('.*bias').setattr('wd_mult', 0)\n"
               "    for _, parameter in net.collect_params('.*weight').items():\n"
               "        parameter.lr_mult = 0.5\n    ")


@needs_mxnet
@pytest.mark.parametrize("optimizer", ["sgd", "adam", "nag"])
def test_lr_mult_and_wd_mult_match_mxnet(tmp_path, optimizer):
    """No weight decay on the biases and half the learning rate on the weights, as GluonCV's --no-wd does."""
    code = OPTIMIZERS[optimizer].replace("'wd': 0.01", "'wd': 0.2")
    case = GluonCase(tmp_path, optimizer, code, "gluon.loss.SoftmaxCrossEntropyLoss()", setup=MULTIPLIERS)
    assert "group_of=parameter_group" in case.text and 'param_groups=[{"wd_mult": 0}, {"lr_mult": 0.5}]' in case.text
    errors, _, _ = run_pair(case, "class", steps=3)
    check(errors)


def test_reader_reads_trainer_loss_and_loop(tmp_path):
    case = GluonCase(tmp_path, "read", SCHEDULES["factor"], "gluon.loss.L2Loss(weight=0.5)")
    train = case.train
    assert train.DEFAULT_BATCH_SIZE == 8 and train.DEFAULT_STEPS == 5 and train.TARGET_KIND == "regression"
    assert "support.GluonSGD(learning_rate=schedule, momentum=0.9, wd=0.01)" in case.text
    assert "support.FactorScheduler(0.1, step=2, factor=0.5, stop_factor_lr=1e-08, initial_lr=0.01)" in case.text
    assert "support.L2Loss(weight=0.5)" in case.text
    assert "mxnet: gluon.Trainer(" in case.text
    assert case.manifest["sources"][0]["classes"][0]["example_inputs"][0]["shape"] == [2, 4, 4]
    support = (case.out / "train_support.py").read_text()
    assert "class GluonSGD(GluonOptimizer)" in support and "class Adam(" not in support


GLUONCV_STYLE = '''"""Image classification training as GluonCV's scripts write it: flags, per-device losses."""

import argparse

import mxnet as mx
from mxnet import autograd, gluon
from mxnet.gluon import nn


class SmallNet(gluon.HybridBlock):
    def __init__(self, classes=10, **kwargs):
        super(SmallNet, self).__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential()
            self.features.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"), nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def parse_args():
    parser = argparse.ArgumentParser(description="Train SmallNet.")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--num-epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--wd", type=float, default=5e-4)
    parser.add_argument("--lr-decay-epoch", type=int, default=2)
    return parser.parse_args()


def main():
    opt = parse_args()
    ctx = [mx.cpu()]
    net = SmallNet()
    net.initialize(mx.init.Xavier(), ctx=ctx)
    images = mx.nd.random.normal(shape=(256, 3, 16, 16))
    targets = mx.nd.random.randint(0, 10, shape=(256,)).astype("float32")
    train_data = gluon.data.DataLoader(gluon.data.ArrayDataset(images, targets), batch_size=opt.batch_size,
                                       shuffle=True, last_batch="discard")
    steps_per_epoch = 256 // opt.batch_size
    schedule = mx.lr_scheduler.FactorScheduler(step=opt.lr_decay_epoch * steps_per_epoch, factor=0.1)
    trainer = gluon.Trainer(net.collect_params(), "nag",
                            {"learning_rate": opt.lr, "momentum": opt.momentum, "wd": opt.wd, "lr_scheduler": schedule})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for epoch in range(opt.num_epochs):
        for i, batch in enumerate(train_data):
            data = gluon.utils.split_and_load(batch[0], ctx_list=ctx, batch_axis=0)
            label = gluon.utils.split_and_load(batch[1], ctx_list=ctx, batch_axis=0)
            with autograd.record():
                outputs = [net(X) for X in data]
                losses = [loss_fn(yhat, y) for yhat, y in zip(outputs, label)]
            for l in losses:
                l.backward()
            trainer.step(opt.batch_size)


if __name__ == "__main__":
    main()
'''


def test_gluoncv_style_script_flags_and_per_device_losses(tmp_path):
    """argparse hyperparameters become train_tpu.py flags; the per-device loss list and the DataLoader are read."""
    source = tmp_path / "train_smallnet.py"
    source.write_text(GLUONCV_STYLE)
    out = tmp_path / "out"
    convert_source(source, out)
    text = (out / "train_tpu.py").read_text()
    assert "support.GluonNAG(learning_rate=schedule, momentum=momentum, wd=wd)" in text
    assert "support.FactorScheduler(" in text and "lr, step=lr_decay_epoch * (256 // batch_size), factor=0.1" in text
    assert "support.SoftmaxCrossEntropyLoss(class_axis=-1)" in text
    assert "is not a gluon.loss loss" not in text
    train = load_module(out / "train_tpu.py")
    assert train.DEFAULT_EPOCHS == 5 and train.DEFAULT_BATCH_SIZE == 64 and train.SOURCE_EXAMPLES == 256
    optimizer = train.build_optimizer()
    assert abs(float(optimizer.learning_rate) - 0.05) < 1e-9  # step 0 of FactorScheduler: the base lr
    assert optimizer.momentum == 0.9 and optimizer.torch_weight_decay == 5e-4
    help_text = subprocess.run([sys.executable, str(out / "train_tpu.py"), "--help"], capture_output=True, text=True,
                               check=True).stdout
    assert "--lr-decay-epoch" in help_text and "--momentum" in help_text
    run = subprocess.run([sys.executable, str(out / "train_tpu.py"), "--steps", "3", "--batch-size", "16", "--lr",
                          "0.1", "--no-export", "--output-dir", str(tmp_path / "run")], capture_output=True, text=True,
                         check=False, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]


# --- the fixture: a Gluon tutorial-style training script -------------------------------------------------------
FIXTURE = GLUON_FIXTURES_DIR / "train_mlp.py"


@pytest.fixture(scope="module")
def fixture_port(tmp_path_factory):
    out = tmp_path_factory.mktemp("train_mlp") / "out"
    completed = subprocess.run([sys.executable, "-m", "porter", "convert", str(FIXTURE), "-o", str(out)],
                               capture_output=True, text=True, cwd=REPO, check=False)
    assert completed.returncode == 0, completed.stderr
    return out


def test_fixture_reads_the_tutorial_loop(fixture_port):
    text = (fixture_port / "train_tpu.py").read_text()
    assert "support.GluonSGD(learning_rate=schedule, momentum=0.9, wd=1e-4)" in text
    assert "support.FactorScheduler(" in text
    assert "support.SoftmaxCrossEntropyLoss(class_axis=-1)" in text
    train = load_module(fixture_port / "train_tpu.py")
    assert train.DEFAULT_EPOCHS == 3 and train.DEFAULT_BATCH_SIZE == 32 and train.SOURCE_EXAMPLES == 512
    assert train.EXAMPLE_INPUTS[0]["shape"] == [1, 28, 28]


def fixture_trainer(source):
    """The fixture's Trainer as one expression: its optimizer_params and lr_scheduler variables inlined."""
    trainer_code = re.search(r"trainer = (gluon\.Trainer\(.*\))", source).group(1)
    params = re.search(r"optimizer_params = (\{.*\})", source)
    schedule = re.search(r"schedule = (mx\.lr_scheduler\.\w+\(.*\))", source)
    if params is not None:
        text = re.sub(r"\bschedule\b", schedule.group(1), params.group(1)) if schedule else params.group(1)
        trainer_code = trainer_code.replace("optimizer_params", text)
    return trainer_code


# fixture -> (main class, batch shape, classes, steps, training mode): each fixture's own Trainer and loss, against
# mxnet; in training mode BatchNorm normalises with the batch statistics and moves its running ones (compared too)
FIXTURE_RUNS = {
    "train_mlp.py": ("MLP", (16, 1, 28, 28), 10, 6, False),  # sgd + momentum + wd + FactorScheduler
    "lenet.py": ("LeNet", (8, 1, 28, 28), 10, 3, False),  # adam
    "mlp_hybrid.py": ("MLP", (8, 1, 28, 28), 10, 3, False),  # sgd + momentum (dropout off on both sides)
    "batchnorm_variants.py": ("NormVariantsNet", (8, 3, 16, 16), 10, 3, True),  # nag + wd, BatchNorm training
}


@needs_mxnet
@pytest.mark.parametrize("name", sorted(FIXTURE_RUNS))
def test_fixture_parity_with_its_trainer(tmp_path, name):
    import tensorflow as tf

    from porter.training.gluon_reference import run_gluon_training

    main, shape, classes, steps, training = FIXTURE_RUNS[name]
    path = GLUON_FIXTURES_DIR / name
    source = path.read_text()
    out = tmp_path / "out"
    convert_source(path, out)
    train = load_module(out / "train_tpu.py")
    loss_code = re.search(r"loss_fn = (gluon\.loss\.\w+\(.*\))", source).group(1)
    rng = np.random.default_rng(3)
    xs = [rng.random(shape).astype(np.float32) for _ in range(2)]
    ys = [rng.integers(0, classes, size=shape[:1]).astype(np.float32) for _ in range(2)]
    # not perturbed in training mode: mxnet's BatchNorm(scale=False) writes 1 into its unused gamma in the forward
    reference = run_gluon_training(path, main, xs, ys, trainer=fixture_trainer(source), loss=loss_code, steps=steps,
                                   seed=1, train_mode=training, perturb=not training)
    model = train.build_model()
    model(tf.zeros((1, *shape[1:])), training=False)
    train.model_lib.load_state_dict(model, reference.initial)
    optimizer = train.build_optimizer(model)
    optimizer.build(model.trainable_variables)
    loss_fn = train.build_loss()
    entries = {e.key: (e.variable, e.to_keras or (lambda a: a)) for e in train.model_lib.collect_state(model)}
    worst_loss = worst_parameter = 0.0
    variables = model.trainable_variables
    names = {id(variable): key for key, (variable, _) in entries.items()}
    kept = {}  # judged where the gradient is above round-off (GRADIENT_FLOOR): a conv bias before a training-mode
    # BatchNorm has a zero gradient in exact arithmetic, and both frameworks move it by round-off only
    for step in range(steps):
        x, y = tf.constant(xs[step % 2]), tf.constant(ys[step % 2])
        if training:  # the gradients, with BatchNorm's running statistics put back afterwards
            statistics = [np.array(v.numpy()) for v in model.non_trainable_variables]
            _, _, gradients = train.compute_gradients(model, loss_fn, x, y, training=True)
            for variable, value in zip(model.non_trainable_variables, statistics):
                variable.assign(value)
            gradients = {index: np.abs(gradient.numpy()) for index, gradient in gradients.items()}
            largest = max(float(g.max()) for g in gradients.values())  # over the model: a whole tensor can be noise
            for index, gradient in gradients.items():
                key = names[id(variables[index])]
                keep = gradient >= GRADIENT_FLOOR * largest
                kept[key] = kept[key] & keep if key in kept else keep
        value = float(train.train_step(model, optimizer, loss_fn, x, y, training=training))
        worst_loss = max(worst_loss, abs(value - reference.mean_losses[step]) / abs(reference.mean_losses[step]))
        for key, expected in reference.states[step].items():
            variable, to_keras = entries[key]
            expected = to_keras(expected)
            difference = np.abs(variable.numpy() - expected)[kept[key]] if key in kept else \
                np.abs(variable.numpy() - expected)
            error = float(np.max(difference, initial=0.0)) / max(float(np.max(np.abs(expected))), 1e-12)
            if error > PARAMETER_TOLERANCE:
                print(f"  step {step} {key}: {error:.2e}")
            worst_parameter = max(worst_parameter, error)
    print(f"{name}, {steps} steps: loss error {worst_loss:.2e}, parameter error {worst_parameter:.2e}")
    assert worst_loss <= LOSS_TOLERANCE and worst_parameter <= PARAMETER_TOLERANCE


@pytest.mark.slow
def test_fixture_train_tpu_runs_and_learns(fixture_port, tmp_path):
    help_run = subprocess.run([sys.executable, str(fixture_port / "train_tpu.py"), "--help"], capture_output=True,
                              text=True, check=False)
    assert help_run.returncode == 0, help_run.stderr
    metrics = tmp_path / "metrics.json"
    run = subprocess.run([sys.executable, str(fixture_port / "train_tpu.py"), "--steps", "48", "--batch-size", "32",
                          "--simulate-replicas", "2", "--no-export", "--output-dir", str(tmp_path / "run"),
                          "--metrics-json", str(metrics)],
                         capture_output=True, text=True, check=False, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    import json

    figures = json.loads(metrics.read_text())
    print(figures)
    assert figures["steps"] == 48 and figures["replicas"] == 2
    assert figures["last_loss_window_mean"] < 0.9 * figures["first_loss_window_mean"], figures


# --- reading variants (no mxnet needed) ----------------------------------------------------------------------------
def read_plan(tmp_path, text, main="Net"):
    from porter.frontend.source import parse_source
    from porter.training.reader import read_training

    path = tmp_path / "variant.py"
    path.write_text(text)
    return read_training(parse_source(path), main)


VARIANT = '''import mxnet as mx
from mxnet import autograd, gluon, nd
from mxnet.gluon import nn


class Net(nn.Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = nn.Dense(3)

    def forward(self, x):
        return self.dense(x)


net = Net()
net.initialize()
X = nd.random.normal(shape=(100, 5))
y = nd.random.normal(shape=(100, 3))
{setup}
for epoch in range(4):
    for i in range(0, 100, 20):
        with autograd.record():
            {record}
        {backward}
        trainer.step({step})
'''


def variant(setup, record="l = loss(net(X[i:i + 20]), y[i:i + 20])", backward="l.backward()", step="20"):
    return VARIANT.format(setup=setup, record=record, backward=backward, step=step)


def test_d2l_style_loss_name_and_strided_batches(tmp_path):
    plan = read_plan(tmp_path, variant("loss = gluon.loss.L2Loss()\ntrainer = gluon.Trainer(net.collect_params(), "
                                       "'sgd', {'learning_rate': 0.03})"))
    assert plan.framework == "mxnet" and plan.optimizer.cls == "GluonSGD" and plan.optimizer.lr.value == 0.03
    assert plan.loss.cls == "L2Loss" and plan.loss.target == "regression"
    assert plan.epochs.value == 4 and plan.batch_size.value == 20 and plan.source_examples.value == 100


def test_optimizer_object_keywords_and_dict_call(tmp_path):
    plan = read_plan(tmp_path, variant("optimizer = mx.optimizer.Adam(learning_rate=0.002, beta1=0.5)\n"
                                       "trainer = gluon.Trainer(params=net.collect_params(), optimizer=optimizer)\n"
                                       "loss = gluon.loss.HuberLoss(rho=2)"))
    assert plan.optimizer.cls == "GluonAdam" and plan.optimizer.lr.value == 0.002
    assert plan.optimizer.setting("beta1").value == 0.5
    assert plan.loss.cls == "GluonHuberLoss" and plan.loss.setting("rho").value == 2
    plan = read_plan(tmp_path, variant("params = dict(learning_rate=0.01, gamma1=0.95, centered=True)\n"
                                       "trainer = gluon.Trainer(net.collect_params(), 'RMSProp', params)\n"
                                       "loss = gluon.loss.L1Loss()"))
    assert plan.optimizer.cls == "GluonRMSProp" and plan.optimizer.setting("centered").value is True


def test_ftml_lamb_and_sgld_keywords_and_scheduler_base_lr(tmp_path):
    """SGLD's noise keeps gluon.Trainer parity out of reach (tests/training/test_gluon_support_optimizers.py replays
    mxnet's draws instead); here its reading. FTML and SGLD leave learning_rate None in mxnet, so a scheduler's
    base_lr stays; LAMB's 0.001 overwrites it."""
    schedule = "mx.lr_scheduler.FactorScheduler(step=2, base_lr=0.3)"
    plan = read_plan(tmp_path, variant(f"trainer = gluon.Trainer(net.collect_params(), 'sgld', {{'wd': 0.1, "
                                       f"'lr_scheduler': {schedule}}})\nloss = gluon.loss.L2Loss()"))
    assert plan.optimizer.cls == "GluonSGLD" and plan.optimizer.lr.value == 0.3
    assert plan.optimizer.setting("wd").value == 0.1 and not plan.notes
    plan = read_plan(tmp_path, variant(f"trainer = gluon.Trainer(net.collect_params(), 'lamb', {{'lower_bound': 0.1, "
                                       f"'bias_correction': False, 'lr_scheduler': {schedule}}})\n"
                                       "loss = gluon.loss.L2Loss()"))
    assert plan.optimizer.cls == "GluonLAMB" and plan.optimizer.lr.value == 0.001
    assert plan.optimizer.setting("bias_correction").value is False
    assert plan.optimizer.setting("lower_bound").value == 0.1
    plan = read_plan(tmp_path, variant(f"trainer = gluon.Trainer(net.collect_params(), 'ftml', {{'lr_scheduler': "
                                       f"{schedule}}})\nloss = gluon.loss.L2Loss()"))
    assert plan.optimizer.cls == "GluonFTML" and plan.optimizer.lr.value == 0.3


def test_unsupported_optimizer_scheduler_and_loss_are_noted(tmp_path):
    plan = read_plan(tmp_path, variant("trainer = gluon.Trainer(net.collect_params(), 'dcasgd', "
                                       "{'learning_rate': 0.1})\nloss = gluon.loss.KLDivLoss()"))
    notes = " ".join(text for _, text in plan.notes)
    assert plan.optimizer.cls == "GluonAdam" and "'dcasgd' has no mxnet-rule counterpart" in notes
    assert "is not a gluon.loss loss porter reads" in notes
    plan = read_plan(tmp_path, variant("schedule = make_schedule()\ntrainer = gluon.Trainer(net.collect_params(), "
                                       "'sgd', {'lr_scheduler': schedule})\nloss = gluon.loss.L2Loss()"))
    assert plan.schedule is None and any("lr_scheduler" in text for _, text in plan.notes)


def test_reductions_and_autograd_backward(tmp_path):
    plan = read_plan(tmp_path, variant("trainer = gluon.Trainer(net.collect_params(), 'sgd')\n"
                                       "loss = gluon.loss.SigmoidBCELoss(from_sigmoid=True)",
                                       record="l = loss(net(X[i:i + 20]), y[i:i + 20]).mean()", step="1"))
    assert plan.loss.target == "binary_probs" and plan.loss.setting("reduction") is None
    assert plan.optimizer.lr.value == 0.01  # mxnet's default learning rate
    plan = read_plan(tmp_path, variant("trainer = gluon.Trainer(net.collect_params(), 'sgd')\n"
                                       "loss = gluon.loss.L2Loss()", record="ls = [loss(net(X[i:i + 20]), "
                                       "y[i:i + 20])]", backward="autograd.backward(ls)", step="1"))
    assert plan.loss.cls == "L2Loss" and plan.loss.setting("reduction").value == "sum"


def test_torch_sources_keep_the_torch_reader(tmp_path):
    from tests.training.helpers import MODEL_SOURCE

    source = tmp_path / "tiny.py"
    source.write_text(MODEL_SOURCE.format(head="self.fc2(x)") + "\n\nmodel = Tiny()\noptimizer = "
                      "torch.optim.SGD(model.parameters(), lr=0.1)\n")
    plan = read_plan(tmp_path, source.read_text(), main="Tiny")
    assert plan.framework == "torch" and plan.optimizer.cls == "SGD"


def test_update_after_allreduce_sample_weight_and_set_learning_rate(tmp_path):
    plan = read_plan(tmp_path, variant("trainer = gluon.Trainer(net.collect_params(), 'adam', {'learning_rate': 0.1}, "
                                       "update_on_kvstore=False)\nloss = gluon.loss.L1Loss()\n"
                                       "w = nd.ones((100, 1))",
                                       record="l = loss(net(X[i:i + 20]), y[i:i + 20], w[i:i + 20])",
                                       backward="l.backward()\n        trainer.allreduce_grads()\n"
                                                "        trainer.set_learning_rate(0.01)",
                                       step="1").replace("trainer.step(1)", "trainer.update(1)"))
    notes = " ".join(text for _, text in plan.notes)
    assert plan.loss.cls == "GluonL1Loss" and plan.loss.setting("reduction").value == "sum"  # update(1) on a sum
    assert "sample_weight" in notes and "set_learning_rate" in notes
