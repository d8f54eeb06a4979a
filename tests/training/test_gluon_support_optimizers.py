"""gluon_support's mxnet-rule optimizers on bare parameters against real mxnet 1.9.1's gluon.Trainer.

Hypothesis draws, per example, one case for every optimizer porter translates: parameter shapes (one to three
tensors of rank 1 to 3), initial values and per-step gradients (from a drawn seed), and the optimizer's
hyper-parameters, wd, rescale_grad and clip_gradient (0 too: mxnet's kernels ignore it, its Python updates zero the
gradient). All cases of an example go to mxnet in one driver call (tests/training/gluon_optimizer_driver.py); each
then runs the same 3 steps through the Keras optimizer under XLA. Parameters must match within 1e-5 of their
tensor's scale after every step. SGLD replays mxnet's own noise draws (the driver re-draws them from the seeded
generator), so its drift is compared exactly; the noise's own distribution is tested on its own below.
"""

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from porter.training.gluon_optimizers import OPTIMIZERS
from porter.verify.mxnet_reference import mxnet_python
from tests.mxnet.gluon_fixtures import needs_mxnet

DRIVER = Path(__file__).resolve().with_name("gluon_optimizer_driver.py")
STEPS = 3
TOLERANCE = 1e-5  # of the parameter tensor's scale
NOISE_SEED = 1234


def unit(low, high):
    return st.floats(low, high, allow_nan=False, allow_infinity=False).map(lambda x: round(x, 4))


def maybe(strategy):
    return st.one_of(st.none(), strategy)


COMMON = {"learning_rate": unit(0.001, 0.1), "wd": st.sampled_from([0.0, 0.01, 0.1]),
          "rescale_grad": st.sampled_from([1.0, 0.25, 2.0]),
          "clip_gradient": st.one_of(st.none(), st.just(0.0), unit(0.05, 1.0))}
BETAS = {"beta1": unit(0.5, 0.95), "beta2": unit(0.9, 0.999)}
OWN = {  # mxnet registry name -> strategies of its own optimizer_params
    "sgd": {"momentum": st.sampled_from([0.0, 0.5, 0.9])},
    "nag": {"momentum": st.sampled_from([0.0, 0.5, 0.9])},
    "adam": {**BETAS, "epsilon": st.sampled_from([1e-8, 1e-6, 1e-3])},
    "rmsprop": {"gamma1": unit(0.5, 0.95), "gamma2": unit(0.5, 0.95), "epsilon": st.sampled_from([1e-8, 1e-6]),
                "centered": st.booleans(), "clip_weights": maybe(unit(0.5, 2.0))},
    "adagrad": {"eps": st.sampled_from([1e-7, 1e-5])},
    "adadelta": {"rho": unit(0.5, 0.95), "epsilon": st.sampled_from([1e-5, 1e-3])},
    "adamax": BETAS,
    "nadam": {**BETAS, "epsilon": st.sampled_from([1e-8, 1e-6]), "schedule_decay": unit(0.001, 0.05)},
    "signum": {"momentum": st.sampled_from([0.0, 0.8, 0.9]), "wd_lh": st.sampled_from([0.0, 0.05])},
    "ftml": {**BETAS, "epsilon": st.sampled_from([1e-8, 1e-6])},
    "lamb": {**BETAS, "epsilon": st.sampled_from([1e-6, 1e-4]), "lower_bound": maybe(unit(0.0, 1.0)),
             "upper_bound": maybe(unit(0.5, 10.0)), "bias_correction": st.booleans()},
    "sgld": {},
}
SHAPES = st.lists(st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple), min_size=1, max_size=3)


@st.composite
def optimizer_case(draw, optimizer):
    params = {key: draw(strategy) for key, strategy in {**COMMON, **OWN[optimizer]}.items()}
    if optimizer == "adamax" and params["clip_gradient"] == 0.0:
        params["clip_gradient"] = None  # a zeroed gradient makes Adamax's m/u 0/0 in mxnet as here
    if optimizer == "signum" and not params["momentum"]:
        params["wd_lh"] = 0.0  # mxnet's signsgd_update rejects wd_lh
    return {"optimizer": optimizer, "params": params, "shapes": draw(SHAPES),
            "seed": draw(st.integers(0, 2**31 - 1)), "gradient_scale": draw(st.sampled_from([0.1, 1.0, 10.0]))}


ALL_CASES = st.tuples(*[optimizer_case(name) for name in sorted(OWN)])


def arrays_of(name, case):
    """Initial values and STEPS gradients per parameter, from the case's seed."""
    rng = np.random.default_rng(case["seed"])
    arrays = {}
    for k, shape in enumerate(case["shapes"]):
        arrays[f"{name}/p{k}/w0"] = rng.standard_normal(shape).astype(np.float32)
        for step in range(STEPS):
            arrays[f"{name}/p{k}/g{step}"] = (case["gradient_scale"] * rng.standard_normal(shape)).astype(np.float32)
    return arrays


def run_mxnet(cases):
    """{name: case} -> (the arrays given, mxnet's parameters and noise draws), in one driver call."""
    arrays, request = {}, []
    for name, case in cases.items():
        arrays.update(arrays_of(name, case))
        request.append({"name": name, "optimizer": case["optimizer"], "params": case["params"],
                        "shapes": [list(s) for s in case["shapes"]], "steps": STEPS,
                        "noise_seed": NOISE_SEED if case["optimizer"] == "sgld" else None})
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        (scratch / "request.json").write_text(json.dumps({"cases": request}))
        np.savez(scratch / "arrays.npz", **arrays)
        completed = subprocess.run([str(mxnet_python()), str(DRIVER), str(scratch / "request.json"),
                                    str(scratch / "arrays.npz"), str(scratch / "out.npz")],
                                   capture_output=True, text=True, timeout=600, check=False)
        assert completed.returncode == 0, completed.stderr[-3000:]
        return arrays, dict(np.load(scratch / "out.npz"))


def keras_optimizer(case):
    from porter.training import gluon_support

    params = dict(case["params"])
    learning_rate = params.pop("learning_rate")
    return getattr(gluon_support, OPTIMIZERS[case["optimizer"]][0])(learning_rate=learning_rate, **params)


def run_keras(name, case, arrays, reference):
    """The case's steps through the Keras optimizer (XLA); the worst error of the parameters against mxnet."""
    import tensorflow as tf

    count = len(case["shapes"])
    variables = [tf.Variable(arrays[f"{name}/p{k}/w0"], name=f"p{k}") for k in range(count)]
    optimizer = keras_optimizer(case)
    optimizer.bind([(f"p{k}", variable) for k, variable in enumerate(variables)])
    optimizer.build(variables)
    if case["optimizer"] == "sgld":  # replay mxnet's draws (see the module docstring)
        replayed = [tf.Variable(tf.zeros_like(variable)) for variable in variables]
        optimizer.noise = lambda variable, stddev: replayed[optimizer._get_variable_index(variable)] + 0.0
    step_function = tf.function(lambda gradients: optimizer.apply(gradients, variables), jit_compile=True)
    worst = 0.0
    for step in range(STEPS):
        if case["optimizer"] == "sgld":
            for k, holder in enumerate(replayed):
                holder.assign(reference[f"{name}/p{k}/noise{step}"])
        step_function([tf.constant(arrays[f"{name}/p{k}/g{step}"]) for k in range(count)])
        for k, variable in enumerate(variables):
            expected = reference[f"{name}/p{k}/w{step + 1}"]
            scale = max(float(np.max(np.abs(expected))), 1e-12)
            worst = max(worst, float(np.max(np.abs(variable.numpy() - expected))) / scale)
    return worst


@needs_mxnet
@settings(max_examples=3, phases=[Phase.explicit, Phase.reuse, Phase.generate])  # shrinking reruns mxnet
@given(drawn=ALL_CASES)
def test_optimizers_match_mxnet_on_drawn_shapes_and_settings(drawn):
    cases = {f"{case['optimizer']}_{i}": case for i, case in enumerate(drawn)}
    arrays, reference = run_mxnet(cases)
    errors = {name: run_keras(name, case, arrays, reference) for name, case in cases.items()}
    print({name: f"{error:.2e}" for name, error in errors.items()})
    failing = {name: (error, cases[name]) for name, error in errors.items() if not error <= TOLERANCE}
    assert not failing, failing


def test_every_translated_optimizer_is_drawn():
    assert set(OWN) == set(OPTIMIZERS)


@needs_mxnet
def test_sgld_noise_has_mxnets_distribution():
    """With a zero gradient and no wd an SGLD step is pure noise: N(0, lr) in mxnet and in the port. Both
    samples' mean and standard deviation match sqrt(lr) within sampling error, and the port's draws differ between
    parameters and steps and repeat with the seed."""
    import tensorflow as tf

    lr, shape = 0.04, (200, 50)
    case = {"optimizer": "sgld", "params": {"learning_rate": lr}, "shapes": [shape, shape], "seed": 0,
            "gradient_scale": 0.0}
    arrays, reference = run_mxnet({"noise": case})
    values = {**arrays, **reference}
    mxnet_noise = np.stack([values[f"noise/p{k}/w{step + 1}"] - values[f"noise/p{k}/w{step}"]
                            for k in range(2) for step in range(STEPS)])

    def port_noise(seed):
        variables = [tf.Variable(arrays[f"noise/p{k}/w0"]) for k in range(2)]
        optimizer = keras_optimizer({**case, "params": {"learning_rate": lr, "seed": seed}})
        optimizer.build(variables)
        step_function = tf.function(lambda gradients: optimizer.apply(gradients, variables), jit_compile=True)
        draws = []
        for _ in range(STEPS):
            before = [variable.numpy() for variable in variables]
            step_function([tf.zeros(shape) for _ in variables])
            draws.extend(variable.numpy() - start for variable, start in zip(variables, before))
        return np.stack(draws)

    noise = port_noise(7)
    count = mxnet_noise.size
    for sample in (mxnet_noise, noise):  # 60,000 draws: the mean's and the std's standard errors are ~0.4%/0.3%
        assert abs(float(sample.mean())) < 5 * np.sqrt(lr / count)
        assert abs(float(sample.std()) / np.sqrt(lr) - 1.0) < 5 / np.sqrt(2 * count)
    flat = noise.reshape(len(noise), -1)
    assert max(abs(np.corrcoef(flat)[i, j]) for i in range(len(flat)) for j in range(i)) < 0.05
    np.testing.assert_array_equal(noise, port_noise(7))
    assert not np.array_equal(noise, port_noise(8))
