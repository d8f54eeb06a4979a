"""XLA under MirroredStrategy: `train_tpu.py --simulate-replicas 2` compiles its step with jit_compile=True.

TensorFlow compiles MirroredStrategy's sync points (all-reduce, the optimizer's merge_call) with XLA only over
GPUs; over CPUs the generated script compiles forward, loss and backward per replica and runs the all-reduce and
the update between the compiled parts. These tests run the real script on two logical CPUs (a subprocess: the
logical devices must exist before TensorFlow starts) and check the compiled parts in process.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.training.helpers import FIXTURES, convert_source, load_module

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "KERAS_BACKEND": "tensorflow"}


@pytest.fixture(scope="module")
def mnist(tmp_path_factory):
    out = tmp_path_factory.mktemp("xla") / "train_mnist"
    convert_source(FIXTURES / "train_mnist.py", out)
    return out


@pytest.mark.slow
def test_two_simulated_replicas_train_with_xla(mnist):
    metrics_path = mnist / "metrics.json"
    result = subprocess.run([sys.executable, str(mnist / "train_tpu.py"), "--steps", "16", "--batch-size", "16",
                             "--simulate-replicas", "2", "--no-export", "--metrics-json", str(metrics_path),
                             "--output-dir", str(mnist / "run")],
                            cwd=mnist, env=ENV, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    metrics = json.loads(metrics_path.read_text())
    assert metrics["strategy"] == "MirroredStrategy" and metrics["replicas"] == 2
    assert metrics["jit_compile"] is True and metrics["xla_scope"] == "forward_backward"
    assert metrics["last_loss_window_mean"] < metrics["first_loss_window_mean"], metrics


def test_jit_off_says_so(mnist):
    train = load_module(mnist / "train_tpu.py")
    assert train.parse_args(["--jit", "off"]).jit == "off"
    assert train.parse_args([]).jit == "auto"


def test_forward_and_backward_compile_alone(mnist):
    """The part compiled under MirroredStrategy over CPUs holds no sync point: XLA takes it whole."""
    import tensorflow as tf

    train = load_module(mnist / "train_tpu.py")
    model = train.build_model()
    inputs = [tf.zeros((1, *s["shape"]), s["dtype"]) for s in train.EXAMPLE_INPUTS]
    model(*inputs, training=False)
    loss_fn = train.build_loss()
    x, y = next(iter(train.make_dataset(8, synthetic=train.synthetic_data(16, seed=0))))
    compiled = tf.function(lambda x, y: train.compute_gradients(model, loss_fn, x, y), jit_compile=True)
    numerator, denominator, gradients = compiled(x, y)
    assert compiled.experimental_get_compiler_ir(x, y)(stage="hlo")
    assert float(denominator) == 8.0 and np.isfinite(float(numerator))
    assert sorted(gradients) == list(range(len(model.trainable_variables)))
