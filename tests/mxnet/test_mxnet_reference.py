"""porter/verify/mxnet_reference.py: one-line errors for a missing mxnet venv and for models that fail in mxnet,
factories as well as classes, training mode, loading a .params file before the forward pass, and mxnet's own
model-zoo files imported as the package modules they are."""

import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

from porter.errors import SourceError, UsageError
from porter.verify.mxnet_reference import mxnet_python, mxnet_unavailable_reason, run_gluon_reference
from tests.mxnet.gluon_fixtures import GLUON_FIXTURES, GLUON_FIXTURES_DIR, make_inputs, needs_mxnet

TINY_MODEL = textwrap.dedent('''
    from mxnet.gluon import nn


    class Tiny(nn.HybridBlock):
        def __init__(self, units=3, wrong_in_units=False, **kwargs):
            super(Tiny, self).__init__(**kwargs)
            self.bn = nn.BatchNorm(in_channels=4)
            self.fc = nn.Dense(units, in_units=5 if wrong_in_units else 4)

        def hybrid_forward(self, F, x):
            return self.fc(self.bn(x))


    def make_tiny(**kwargs):
        return Tiny(**kwargs)


    class TinyClassIds(Tiny):
        def hybrid_forward(self, F, x):
            return F.argmax(self.fc(self.bn(x)), axis=1).astype("int32")


    def not_a_block():
        return 42
''')


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.py"
    path.write_text(TINY_MODEL)
    return path


def test_missing_venv_is_one_line_naming_the_fix(tmp_path):
    missing = str(tmp_path / "no-venv" / "bin" / "python")
    assert "scripts/setup.sh" in mxnet_unavailable_reason(missing)
    with pytest.raises(UsageError) as raised:
        run_gluon_reference(GLUON_FIXTURES_DIR / "lenet.py", "LeNet", [np.zeros((1, 1, 28, 28), "float32")],
                            python=missing)
    assert "\n" not in str(raised.value) and "scripts/setup.sh" in str(raised.value)


@needs_mxnet
def test_a_model_failing_in_mxnet_gives_mxnets_last_line(tiny):
    with pytest.raises(SourceError) as raised:
        run_gluon_reference(tiny, "Tiny", [np.ones((2, 4), "float32")], init_kwargs={"wrong_in_units": True})
    message = str(raised.value)
    assert "\n" not in message and message.startswith(str(tiny))
    assert "mxnet 1.9.1 failed to initialize the parameters: MXNetError" in message
    assert "Shape inconsistent" in message or "shape" in message.lower()


@needs_mxnet
@pytest.mark.parametrize("name, stage", [("Missing", "construct the model"), ("not_a_block", "construct the model")])
def test_bad_main_names_the_stage(tiny, name, stage):
    with pytest.raises(SourceError, match=stage):
        run_gluon_reference(tiny, name, [np.ones((2, 4), "float32")])


@needs_mxnet
def test_factory_training_mode_and_loaded_parameters(tiny, tmp_path):
    x = np.random.default_rng(0).standard_normal((6, 4)).astype("float32")
    saved = tmp_path / "tiny.params"
    first = run_gluon_reference(tiny, "make_tiny", [x], seed=3, perturb=True, save_parameters=saved)
    assert first.outputs[0].shape == (6, 3)
    assert set(first.parameters) == {"bn.gamma", "bn.beta", "bn.running_mean", "bn.running_var", "fc.weight",
                                     "fc.bias"}
    assert set(first.parameter_gradients) == {"bn.gamma", "bn.beta", "fc.weight", "fc.bias"}

    reloaded = run_gluon_reference(tiny, "make_tiny", [x], seed=99, load_parameters=saved)
    np.testing.assert_array_equal(reloaded.outputs[0], first.outputs[0])

    training = run_gluon_reference(tiny, "make_tiny", [x], load_parameters=saved, training=True)
    normalised = training.outputs[0] - first.outputs[0]
    assert np.abs(normalised).max() > 1e-3, "training mode must normalise with the batch statistics"


@needs_mxnet
@pytest.mark.parametrize("filename, main, init_kwargs", [
    ("lenet.py", "LeNet", {}),  # convolutions: MKLDNN's backward after an inference-mode forward is wrong
    ("text_rnn_classifier.py", "TextClassifier", {"dropout": 0.0}),  # fused LSTM: runs with MKLDNN on
])
def test_gradients_do_not_depend_on_the_mode_when_the_model_does_not(filename, main, init_kwargs):
    """Without BatchNorm or active dropout, inference and training mode compute the same function, so their
    gradients must agree exactly; mxnet 1.9.1 with MKLDNN breaks this for convolutions (see mxnet_reference)."""
    spec = GLUON_FIXTURES[filename].inputs
    inputs = make_inputs(spec, seed=2)
    inference, training = (run_gluon_reference(GLUON_FIXTURES_DIR / filename, main, inputs, init_kwargs=init_kwargs,
                                               training=mode) for mode in (False, True))
    np.testing.assert_array_equal(inference.outputs[0], training.outputs[0])
    for name, gradient in inference.parameter_gradients.items():
        np.testing.assert_array_equal(training.parameter_gradients[name], gradient, err_msg=name)


@needs_mxnet
def test_integer_outputs_only_give_no_gradients(tiny):
    reference = run_gluon_reference(tiny, "TinyClassIds", [np.ones((3, 4), "float32")])
    assert reference.outputs[0].dtype == np.int32 and reference.outputs[0].shape == (3,)
    assert all(not gradient.any() for gradient in reference.parameter_gradients.values())


@needs_mxnet
@pytest.mark.parametrize("filename, factory, init_kwargs, output_shape", [
    ("resnet.py", "get_resnet", {"version": 2, "num_layers": 18, "classes": 5}, (1, 5)),
    ("mobilenet.py", "get_mobilenet_v2", {"multiplier": 0.25, "classes": 5}, (1, 5)),
])
def test_model_zoo_files_run_through_their_factories(filename, factory, init_kwargs, output_shape):
    """mxnet's own model zoo files use relative imports: the driver imports them as package modules."""
    where = "import mxnet.gluon.model_zoo.vision as zoo; print(zoo.__path__[0])"
    zoo = subprocess.run([str(mxnet_python()), "-I", "-c", where], capture_output=True, text=True,
                         check=True).stdout.strip()
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype("float32")
    reference = run_gluon_reference(Path(zoo) / filename, factory, [x], init_kwargs=init_kwargs, perturb=True)
    assert reference.outputs[0].shape == output_shape and np.isfinite(reference.outputs[0]).all()
    assert reference.parameter_gradients and all(np.isfinite(g).all() for g in reference.parameter_gradients.values())
