"""Property tests of the loss rules (porter/rules/losses.py) against torch: the functional losses with their
options (class weights, ignore_index, label smoothing, probability targets, reductions, K-dimensional inputs,
pos_weight, beta), a loss module held by the model, and a minGPT-style model whose forward returns (logits, loss)
and whose `generate` (top-k, greedy, multinomial sampling) runs in the port."""

import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.compare import assert_equivalent
from tests.rules.op_ports import port, random_input


def _runtime():
    from porter.runtime import losses

    return losses


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 4), classes=st.integers(2, 6), extra=st.sampled_from([(), (3,), (2, 3)]),
       reduction=st.sampled_from(["mean", "sum", "none"]), smoothing=st.sampled_from([0.0, 0.1]),
       weighted=st.booleans(), ignore=st.booleans(), seed=st.integers(0, 2**16))
def test_cross_entropy_and_nll_match_torch(batch, classes, extra, reduction, smoothing, weighted, ignore, seed):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((batch, classes, *extra)).astype(np.float32) * 3
    target = rng.integers(0, classes, (batch, *extra)).astype(np.int64)
    if ignore:
        target.flat[0] = -1
    weight = rng.uniform(0.5, 2.0, classes).astype(np.float32) if weighted else None
    kwargs = {"reduction": reduction, "ignore_index": -1}
    tw = torch.from_numpy(weight) if weighted else None
    want = F.cross_entropy(torch.from_numpy(logits), torch.from_numpy(target), weight=tw, label_smoothing=smoothing,
                           **kwargs).numpy()
    got = _runtime().cross_entropy(logits, target, weight=weight, label_smoothing=smoothing, **kwargs)
    assert_equivalent(want, np.asarray(got), tolerance=1e-5, what="cross_entropy")
    logp = torch.log_softmax(torch.from_numpy(logits), 1)
    want = F.nll_loss(logp, torch.from_numpy(target), weight=tw, **kwargs).numpy()
    got = _runtime().nll_loss(logp.numpy(), target, weight=weight, **kwargs)
    assert_equivalent(want, np.asarray(got), tolerance=1e-5, what="nll_loss")


@settings(max_examples=15, deadline=None)
@given(batch=st.integers(1, 4), classes=st.integers(2, 5), smoothing=st.sampled_from([0.0, 0.2]),
       seed=st.integers(0, 2**16))
def test_cross_entropy_with_probability_targets_matches_torch(batch, classes, smoothing, seed):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((batch, classes)).astype(np.float32)
    target = rng.dirichlet(np.ones(classes), batch).astype(np.float32)
    want = F.cross_entropy(torch.from_numpy(logits), torch.from_numpy(target), label_smoothing=smoothing).numpy()
    got = _runtime().cross_entropy(logits, target, label_smoothing=smoothing)
    assert_equivalent(want, np.asarray(got), tolerance=1e-5, what="cross_entropy(probabilities)")


@settings(max_examples=20, deadline=None)
@given(shape=st.sampled_from([(1,), (3, 4), (2, 3, 5)]), reduction=st.sampled_from(["mean", "sum", "none"]),
       beta=st.sampled_from([0.5, 1.0, 2.0]), positive=st.booleans(), seed=st.integers(0, 2**16))
def test_regression_and_binary_losses_match_torch(shape, reduction, beta, positive, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32) * 3
    y = rng.standard_normal(shape).astype(np.float32)
    labels = rng.integers(0, 2, shape).astype(np.float32)
    weight = rng.uniform(0.5, 2.0, shape[-1:]).astype(np.float32)
    pos_weight = rng.uniform(0.5, 3.0, shape[-1:]).astype(np.float32) if positive else None
    tx, ty, tl = torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(labels)
    losses = _runtime()
    cases = [
        (F.mse_loss(tx, ty, reduction=reduction), losses.mse_loss(x, y, reduction=reduction)),
        (F.l1_loss(tx, ty, reduction=reduction), losses.l1_loss(x, y, reduction=reduction)),
        (F.smooth_l1_loss(tx, ty, reduction=reduction, beta=beta),
         losses.smooth_l1_loss(x, y, reduction=reduction, beta=beta)),
        (F.binary_cross_entropy_with_logits(tx, tl, weight=torch.from_numpy(weight), reduction=reduction,
                                            pos_weight=None if pos_weight is None else torch.from_numpy(pos_weight)),
         losses.binary_cross_entropy_with_logits(x, labels, weight=weight, reduction=reduction, pos_weight=pos_weight)),
        (F.binary_cross_entropy(torch.sigmoid(tx), tl, reduction=reduction),
         losses.binary_cross_entropy(torch.sigmoid(tx).numpy(), labels, reduction=reduction)),
    ]
    for want, got in cases:
        assert_equivalent(want.numpy(), np.asarray(got), tolerance=1e-5, what="loss")


LOSS_MODULE_MODEL = '''
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, features=6, classes=4):
        super().__init__()
        self.fc = nn.Linear(features, classes)
        self.criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
        self.aux = nn.MSELoss(reduction="sum")

    def forward(self, x, labels):
        logits = self.fc(x)  # (N, T, C): the loss takes the classes on axis 1
        return self.criterion(logits.transpose(1, 2), labels) + 0.01 * self.aux(logits, torch.zeros_like(logits))
'''


@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_loss_modules_in_model_code_match_torch(loss_model, batch, seed):
    x = random_input(seed, (batch, 5, 6))
    labels = np.random.default_rng(seed).integers(0, 4, (batch, 5)).astype(np.int64)
    (want,), (got,) = loss_model.run_torch([x, labels]), loss_model.run_keras([x, labels])
    assert_equivalent(want, got, tolerance=1e-5, what="loss modules")


@pytest.fixture(scope="module")
def loss_model(tmp_path_factory):
    return port(tmp_path_factory.mktemp("loss_model"), textwrap.dedent(LOSS_MODULE_MODEL),
                input_specs=("5,6", "5:int64:0:4"))


MINGPT = Path(__file__).resolve().parent / "mingpt_style.py"


@pytest.fixture(scope="module")
def mingpt(tmp_path_factory):
    from porter.convert import ConvertOptions, convert
    from porter.output import write_tree
    from porter.verify.harness import PortedPair

    folder = tmp_path_factory.mktemp("mingpt")
    path = folder / "mingpt_style.py"
    path.write_text(MINGPT.read_text())
    conversion = convert(ConvertOptions(path, folder / "out", class_name="GPT", input_specs=["12:int64:0:50"]))
    assert conversion.exit_code == 0, conversion.manifest["sources"][0]["classes"]
    write_tree(folder / "out", conversion.files)
    return PortedPair(folder / "out")


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(2, 12), seed=st.integers(0, 2**16))
def test_mingpt_loss_in_forward_matches_torch(mingpt, batch, length, seed):
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    idx = rng.integers(0, 50, (batch, length)).astype(np.int64)
    targets = rng.integers(0, 50, (batch, length)).astype(np.int64)
    targets[0, 0] = -1  # ignore_index=-1
    with torch.no_grad():
        logits, loss = mingpt.torch_model(torch.from_numpy(idx), torch.from_numpy(targets))
    got_logits, got_loss = mingpt.keras_model(tf.constant(idx), tf.constant(targets), training=False)
    assert_equivalent(logits.numpy(), got_logits.numpy(), tolerance=1e-5, what="logits")
    assert_equivalent(loss.numpy(), got_loss.numpy(), tolerance=1e-5, what="loss")


def test_mingpt_generate_matches_torch_greedy_and_samples_valid_tokens(mingpt):
    import tensorflow as tf

    idx = np.random.default_rng(0).integers(0, 50, (2, 3)).astype(np.int64)
    with torch.no_grad():
        want = mingpt.torch_model.generate(torch.from_numpy(idx), 5, top_k=10).numpy()
    got = mingpt.keras_model.generate(tf.constant(idx), 5, top_k=10).numpy()
    np.testing.assert_array_equal(want, got)
    sampled = mingpt.keras_model.generate(tf.constant(idx), 4, do_sample=True, top_k=5).numpy()
    assert sampled.shape == (2, 7) and sampled.min() >= 0 and sampled.max() < 50


def test_multinomial_draws_as_torch_does():
    from porter.runtime.sampling import multinomial

    weights = np.array([[0.1, 0.0, 0.6, 0.3]], np.float32)
    draws = np.asarray(multinomial(np.repeat(weights, 4000, 0), 1))[:, 0]
    frequencies = np.bincount(draws, minlength=4) / draws.size
    np.testing.assert_allclose(frequencies, weights[0], atol=0.03)
    without = np.asarray(multinomial(np.repeat(weights, 500, 0), 3))
    assert all(len(set(row)) == 3 and 1 not in row for row in without)  # no repeats, never a zero weight
    assert np.asarray(multinomial(weights[0], 2, replacement=True)).shape == (2,)
