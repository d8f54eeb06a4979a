"""porter/verify/mxnet_resident.py and mxnet_fork_server.py: a reference run from the resident mxnet process is
bit-identical to a one-shot driver process (fused RNN models too, which restart with MKLDNN on), one run's module
state never reaches the next, and a run that hangs or dies is reported as a one-shot run's would be while the server
keeps serving."""

import textwrap

import numpy as np
import pytest

from porter.errors import SourceError
from porter.verify.mxnet_reference import run_gluon_reference
from porter.verify.mxnet_resident import SWITCH_VARIABLE
from tests.mxnet.gluon_fixtures import GLUON_FIXTURES, GLUON_FIXTURES_DIR, make_inputs, needs_mxnet

pytestmark = needs_mxnet

MODEL = textwrap.dedent('''
    import os
    import time

    from mxnet.gluon import nn

    SCALE = {scale}


    class Scaled(nn.HybridBlock):
        def __init__(self, **kwargs):
            super(Scaled, self).__init__(**kwargs)
            self.fc = nn.Dense(3, in_units=4)

        def hybrid_forward(self, F, x):
            return self.fc(x) * SCALE


    def hangs():
        time.sleep(60)


    def dies():
        os._exit(3)
''')


def _model(folder, scale):
    folder.mkdir()
    path = folder / "scaled.py"
    path.write_text(MODEL.format(scale=scale))
    return path


def _both_ways(monkeypatch, *args, **kwargs):
    monkeypatch.delenv(SWITCH_VARIABLE, raising=False)
    one_shot = run_gluon_reference(*args, **kwargs)
    monkeypatch.setenv(SWITCH_VARIABLE, "1")
    return one_shot, run_gluon_reference(*args, **kwargs)


@pytest.mark.parametrize("filename, main, init_kwargs, training", [
    ("lenet.py", "LeNet", {}, True),  # convolutions with MKLDNN off
    ("text_rnn_classifier.py", "TextClassifier", {"dropout": 0.0}, False),  # fused LSTM: restarts with MKLDNN on
])
def test_resident_runs_match_one_shot_runs_exactly(monkeypatch, filename, main, init_kwargs, training):
    inputs = make_inputs(GLUON_FIXTURES[filename].inputs, seed=1)
    one_shot, resident = _both_ways(monkeypatch, GLUON_FIXTURES_DIR / filename, main, inputs,
                                    init_kwargs=init_kwargs, training=training, perturb=True)
    for expected, got in zip(one_shot.outputs, resident.outputs, strict=True):
        np.testing.assert_array_equal(got, expected)
    assert one_shot.parameter_gradients.keys() == resident.parameter_gradients.keys()
    for name, gradient in one_shot.parameter_gradients.items():
        np.testing.assert_array_equal(resident.parameter_gradients[name], gradient, err_msg=name)


def test_a_run_sees_its_own_model_file_not_an_earlier_one_of_the_same_name(monkeypatch, tmp_path):
    monkeypatch.setenv(SWITCH_VARIABLE, "1")
    x = np.ones((2, 4), "float32")
    single = run_gluon_reference(_model(tmp_path / "a", 1.0), "Scaled", [x])
    double = run_gluon_reference(_model(tmp_path / "b", 2.0), "Scaled", [x])
    np.testing.assert_allclose(double.outputs[0], 2 * single.outputs[0], rtol=1e-6)


def test_a_hanging_or_dying_run_is_reported_and_the_server_serves_on(monkeypatch, tmp_path):
    monkeypatch.setenv(SWITCH_VARIABLE, "1")
    model, x = _model(tmp_path / "m", 1.0), np.ones((2, 4), "float32")
    with pytest.raises(SourceError, match="did not finish within 2 s"):
        run_gluon_reference(model, "hangs", [x], timeout=2)
    with pytest.raises(SourceError, match="exited with status 3"):
        run_gluon_reference(model, "dies", [x])
    assert run_gluon_reference(model, "Scaled", [x]).outputs[0].shape == (2, 3)
