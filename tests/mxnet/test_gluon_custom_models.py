"""porter convert on small Gluon models of tests/mxnet/models/ written in other styles than the fixtures (Gluon 2
`forward` reading `self.weight.data()`, `gluon.Parameter`, hybrid_forward parameters in another order with
defaults, model-zoo factories): the port loads the `.params` file real mxnet 1.9.1 wrote and computes mxnet's
outputs within 1e-4 relative to the output scale, eagerly and under XLA."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from porter.weights.gluon_params import read_gluon_params
from tests.mxnet.gluon_fixtures import GluonCase, f32, integers, make_inputs, needs_mxnet
from tests.mxnet.test_gluon_convert import import_port

REPOSITORY = Path(__file__).resolve().parents[2]
MODELS = Path(__file__).resolve().parent / "models"

# key -> (model file, how mxnet builds it, how the port builds it)
CASES = {
    "gated_projection": ("gated_projection.py", GluonCase("GatedProjection", [f32(5, 3, 4)], (5, 3)),
                         lambda module: module.GatedProjection()),
    "gated_projection batch 1": ("gated_projection.py", GluonCase(
        "GatedProjection", [f32(1, 2, 5)], (1, 3), {"in_units": 10, "units": 4}),
        lambda module: module.GatedProjection(in_units=10, units=4)),
    "pooled_attention": ("pooled_attention.py", GluonCase(
        "PooledAttention", [f32(3, 7, 6), integers(3, low=1, high=8, dtype="float32")], (3, 6, 5)),
        lambda module: module.PooledAttention()),
    "pooled_attention batch 1": ("pooled_attention.py", GluonCase(
        "PooledAttention", [f32(1, 4, 3), integers(1, low=1, high=5, dtype="float32")], (1, 4, 2),
        {"units": 3, "hidden": 2, "heads": 2}),
        lambda module: module.PooledAttention(units=3, hidden=2, heads=2)),
}


def flat_outputs(result):
    if isinstance(result, (tuple, list)):
        return [array for item in result for array in flat_outputs(item)]
    return [np.asarray(result)]


def check_port_matches_mxnet(source, case, build, out, params_path):
    """Convert `source`, run mxnet and the port on the case's inputs; returns (eager, XLA) relative errors."""
    import tensorflow as tf

    from porter.verify.mxnet_reference import run_gluon_reference

    completed = subprocess.run([sys.executable, "-m", "porter", "convert", str(source), "-o", str(out)],
                               capture_output=True, text=True, cwd=REPOSITORY, check=False)
    assert completed.returncode == 0, completed.stderr
    inputs = make_inputs(case.inputs)
    reference = run_gluon_reference(source, case.main, inputs, init_kwargs=case.init_kwargs, perturb=True,
                                    save_parameters=params_path)
    assert reference.outputs[0].shape == case.output_shape
    module = import_port(out, source.name)
    model = build(module)
    model(*[tf.constant(x) for x in inputs])
    state = read_gluon_params(params_path)
    assert set(state) == set(reference.parameters)
    module.load_state_dict(model, state)
    errors = []
    compiled = tf.function(lambda *xs: model(*xs), jit_compile=True)
    for run in (lambda *xs: model(*xs), compiled):
        actual = flat_outputs(tf.nest.map_structure(lambda t: t.numpy(), run(*[tf.constant(x) for x in inputs])))
        assert len(actual) == len(reference.outputs)
        worst = 0.0
        for got, expected in zip(actual, reference.outputs):
            assert got.shape == expected.shape
            scale = float(np.max(np.abs(expected))) or 1.0
            worst = max(worst, float(np.max(np.abs(got - expected))) / scale)
        errors.append(worst)
    return errors


@needs_mxnet
@pytest.mark.parametrize("key", sorted(CASES))
def test_model_port_matches_mxnet(key, tmp_path):
    name, case, build = CASES[key]
    eager, xla = check_port_matches_mxnet(MODELS / name, case, build, tmp_path / "port", tmp_path / "model.params")
    print(f"{key}: max error relative to the output scale: eager {eager:.2e}, XLA {xla:.2e}")
    assert eager <= 1e-4
    assert xla <= 1e-4
