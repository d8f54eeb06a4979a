"""mixed_bfloat16, as `train_tpu.py --precision mixed_bfloat16` (the default on TPU) runs the port: variables
float32, compute bfloat16, softmax / normalisation statistics / attention scores / losses in float32, and the
model's own outputs float32. Judged against the float32 torch reference: the forward keeps a centred cosine >= 0.99
on convnet and transformer fixtures, and a few training steps under the policy reduce the loss.
"""

import numpy as np
import pytest

from porter.verify.harness import PortedPair
from tests.training.helpers import FIXTURES, convert_source, load_module

FIXTURE_NAMES = ["resnet", "mobilenetv2", "vit", "gpt_mini", "transformer_classifier"]
CASES = TRAINING_CASES = FIXTURE_NAMES


def centred_cosine(expected, actual):
    """Cosine of the two outputs after removing each one's mean: a shared offset cannot hide a wrong shape."""
    expected = np.asarray(expected, np.float64).ravel()
    actual = np.asarray(actual, np.float64).ravel()
    expected, actual = expected - expected.mean(), actual - actual.mean()
    return float(expected @ actual / (np.linalg.norm(expected) * np.linalg.norm(actual)))


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    root = tmp_path_factory.mktemp("precision")
    for name in FIXTURE_NAMES:
        convert_source(FIXTURES / f"{name}.py", root / name)
    return {name: root / name for name in FIXTURE_NAMES}


@pytest.fixture
def mixed_policy():
    import keras

    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_bfloat16")
    yield
    keras.config.set_dtype_policy(previous)


@pytest.mark.parametrize("name", CASES)
def test_forward_under_mixed_bfloat16_keeps_centred_cosine(ports, name):
    import tensorflow as tf

    pair = PortedPair(ports[name], source_path=FIXTURES / f"{name}.py", precision="mixed_bfloat16")
    model = pair.keras_model
    assert model.compute_dtype == "bfloat16"
    assert {v.dtype for v in model.weights if "float" in str(v.dtype)} == {"float32"}
    inputs = pair.example_inputs(batch=4, seed=1)
    expected = pair.run_torch(inputs)[0]
    output = model(*[tf.constant(a) for a in inputs], training=False)
    assert output.dtype == tf.float32  # the logits the loss reads
    actual = output.numpy()
    assert centred_cosine(expected, actual) >= 0.99, name
    scale = np.abs(expected).max()
    assert np.abs(actual - expected).max() > 1e-5 * scale  # the compute really ran in bfloat16


@pytest.mark.parametrize("name", TRAINING_CASES)
def test_training_steps_under_mixed_bfloat16_reduce_the_loss(ports, name, mixed_policy):
    import keras
    import tensorflow as tf

    train = load_module(ports[name] / "train_tpu.py")
    keras.config.set_dtype_policy("float32")  # the teacher that labels the synthetic set is float32
    inputs, targets = train.synthetic_data(8, seed=0)
    keras.config.set_dtype_policy("mixed_bfloat16")
    model = train.build_model()
    x = tuple(tf.constant(a) for a in inputs)
    model(*x, training=False)
    optimizer = train.build_optimizer(model)
    optimizer.build(model.trainable_variables)
    loss_fn = train.build_loss()
    y = tf.constant(targets)
    step = tf.function(lambda: train.train_step(model, optimizer, loss_fn, x, y, training=True))
    losses = [float(step()) for _ in range(6)]
    assert all(np.isfinite(losses)), losses
    assert {v.dtype for v in model.trainable_variables} == {"float32"}
    assert min(losses[-2:]) < losses[0], losses
