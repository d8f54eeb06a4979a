"""Every Gluon fixture builds and runs in real mxnet 1.9.1 through porter's reference driver: outputs of the expected
shape, finite gradients of sum(outputs) for the inputs and every trainable parameter, the same results hybridized,
and a `.params` file from save_parameters that porter's reader reads back.
"""

import numpy as np
import pytest

from porter.verify.mxnet_reference import run_gluon_reference
from porter.weights.gluon_params import read_gluon_params
from tests.mxnet.gluon_fixtures import GLUON_FIXTURES, GLUON_FIXTURES_DIR, GLUON_VARIANTS, make_inputs, needs_mxnet

MAX_PARAMETERS = 500_000
# Blocks whose forward is written for NDArrays only (`forward(self, x)`): hybridize() leaves them imperative.
IMPERATIVE_ONLY = {"lstm_cell_unroll.py", "token_mlp_forward.py"}
ALL_CASES = {**{name: (name, case) for name, case in GLUON_FIXTURES.items()}, **GLUON_VARIANTS}


def test_table_covers_every_gluon_fixture():
    on_disk = {path.name for path in GLUON_FIXTURES_DIR.glob("*.py")}
    assert on_disk == set(GLUON_FIXTURES)
    assert len(on_disk) >= 10


@pytest.fixture(scope="module")
def imperative_run(tmp_path_factory):
    """imperative_run(case name) -> (inputs, GluonReference, .params path): each case's imperative mxnet run, made
    once for both tests below (a run starts mxnet in a fresh process)."""
    runs = {}

    def get(case_name):
        if case_name not in runs:
            filename, case = ALL_CASES[case_name]
            inputs = make_inputs(case.inputs)
            params_path = tmp_path_factory.mktemp("gluon_fixture") / "model.params"
            reference = run_gluon_reference(GLUON_FIXTURES_DIR / filename, case.main, inputs,
                                            init_kwargs=case.init_kwargs, perturb=True, save_parameters=params_path)
            runs[case_name] = inputs, reference, params_path
        return runs[case_name]

    return get


@needs_mxnet
@pytest.mark.parametrize("case_name", sorted(ALL_CASES))
def test_fixture_runs_forward_and_backward(case_name, imperative_run):
    filename, case = ALL_CASES[case_name]
    inputs, reference, params_path = imperative_run(case_name)

    assert reference.outputs[0].shape == case.output_shape
    assert all(np.isfinite(output).all() for output in reference.outputs)
    for spec, x, gradient in zip(case.inputs, inputs, reference.input_gradients):
        if spec[0] == "float32" and spec[2] is None:
            assert gradient.shape == x.shape and np.isfinite(gradient).all()
            assert np.abs(gradient).max() > 0, "the output does not depend on this input"
    assert 0 < sum(p.size for p in reference.parameters.values()) <= MAX_PARAMETERS
    assert reference.parameter_gradients, "no trainable parameters"
    assert all(np.isfinite(g).all() for g in reference.parameter_gradients.values())
    assert all(reference.parameter_gradients[name].shape == reference.parameters[name].shape
               for name in reference.parameter_gradients)
    assert any(np.abs(g).max() > 0 for g in reference.parameter_gradients.values())

    saved = read_gluon_params(params_path)
    assert list(saved) == list(reference.parameters)
    for name, value in reference.parameters.items():
        assert saved[name].dtype == value.dtype and saved[name].tobytes() == value.tobytes(), name


@needs_mxnet
@pytest.mark.parametrize("filename", sorted(set(GLUON_FIXTURES) - IMPERATIVE_ONLY))
def test_hybridized_fixture_matches_imperative(filename, imperative_run):
    case = GLUON_FIXTURES[filename]
    inputs, imperative, _ = imperative_run(filename)  # the same perturbed parameters: the same seed
    hybridized = run_gluon_reference(GLUON_FIXTURES_DIR / filename, case.main, inputs, init_kwargs=case.init_kwargs,
                                     perturb=True, hybridize=True)
    for ours, theirs in zip(imperative.outputs, hybridized.outputs):
        np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=1e-6)
    for name, gradient in imperative.parameter_gradients.items():
        np.testing.assert_allclose(hybridized.parameter_gradients[name], gradient, rtol=1e-4, atol=1e-6,
                                   err_msg=name)
