"""porter.verify.checks: forward, gradient and train-mode checks pass on faithful ports and name what breaks."""

import pytest

from porter.verify.checks import Equivalence, EquivalenceFailure
from porter.verify.harness import PortedPair
from porter.verify.localise import keras_layer_at
from porter.verify.strategies import Case


@pytest.fixture(scope="module")
def lenet(converted):
    return Equivalence(PortedPair(converted("lenet")))


@pytest.fixture(scope="module")
def vgg(converted):
    return Equivalence(PortedPair(converted("vgg_small")))


def test_faithful_port_passes_every_check(lenet):
    result = lenet.check(lenet.baseline())
    assert result["forward"]["rel"] < 1e-5 and result["forward"]["judged"]
    assert result["gradients"] < 1e-4
    assert result["train"] is None  # no BatchNorm: nothing train-mode specific
    assert lenet.variants == [[(1, 28, 28)]]  # Linear(16*5*5) after the convs fixes the size


def test_extreme_magnitudes_are_judged_on_masks_only(lenet):
    result = lenet.check(Case(3, 3.1, 0, 5))
    assert not result["forward"]["judged"] and result["gradients"] is None


def test_batchnorm_model_trains_alike_with_dropout_switched_off(vgg):
    assert vgg.train_mode  # nn.Dropout(p=0.5) in the classifier is switched off on both sides
    assert vgg.check_train_mode(Case(3, 0.0, 0, 2)) < 1e-3
    assert vgg.check_train_mode(Case(1, 0.0, 0, 2)) is not None  # batch 1 is checked with batch 2


def test_running_statistics_update_is_compared(converted):
    equivalence = Equivalence(PortedPair(converted("vgg_small")))
    for model in (equivalence.pair.keras_model, equivalence._float64_keras()):  # a port error is in both builds
        keras_layer_at(model, "features.1").momentum = 0.5
    equivalence.check_forward(Case(2, 0.0, 0, 1))  # momentum changes nothing in eval mode
    with pytest.raises(EquivalenceFailure) as failure:
        equivalence.check_train_mode(Case(2, 0.0, 0, 1))
    assert failure.value.stage == "train" and "features.1.running_" in failure.value.message
    assert failure.value.suspects == ["features.1"]


def test_parameter_frozen_in_the_port_is_a_gradient_failure(converted):
    equivalence = Equivalence(PortedPair(converted("lenet")))
    equivalence.pair.keras_model.fc2.bias.trainable = False
    with pytest.raises(EquivalenceFailure) as failure:
        equivalence.check_gradients(Case(2, 0.0, 0, 1))
    assert "not trainable" in failure.value.message and failure.value.suspects == ["fc2"]


def test_bf16_port_is_judged_by_cosine(converted):
    equivalence = Equivalence(PortedPair(converted("lenet"), precision="mixed_bfloat16"))
    result = equivalence.check(Case(4, 0.0, 0, 3))
    assert result["forward"]["cosine"] >= 0.99 and result["forward"]["argmax"] is not None
    assert result["gradients"] is None and result["train"] is None


def test_float64_arbiter_excuses_round_off_and_never_a_port_error(converted):
    """The float64 arbiter (checks.py `_equal_in_float64`): a faithful port built in float64 gives torch's float64
    gradients on every tensor; a port whose float64 build computes something else (a changed weight) does not."""
    import numpy as np

    equivalence = Equivalence(PortedPair(converted("vgg_small")))
    case = Case(2, 0.0, 0, 1)
    inputs = equivalence.inputs(case)
    exact = equivalence._float64_gradients(case, inputs, True)
    names = sorted(exact)
    assert equivalence._equal_in_float64(case, inputs, True, exact, names)
    # a training-mode run moves the float64 port's BatchNorm statistics; the next case (eval mode: torchvision's
    # FCN failed one so) meets the reference's again
    statistics = keras_layer_at(equivalence._float64_keras(), "features.1").running_mean.numpy()
    assert equivalence._equal_in_float64(case, inputs, True, exact, names)
    np.testing.assert_array_equal(keras_layer_at(equivalence._float64_keras(), "features.1").running_mean.numpy(),
                                  statistics)
    assert equivalence._equal_in_float64(case, inputs, False, equivalence._float64_gradients(case, inputs, False),
                                         names)
    layer = keras_layer_at(equivalence._float64_keras(), "features.0")
    layer.weight.assign(layer.weight * np.float64(1.001))  # a port error of a tenth of a percent
    assert not equivalence._equal_in_float64(case, inputs, True, exact, names)


def test_float64_arbiter_of_a_training_step_excuses_round_off_and_never_a_port_error(converted):
    """A training-mode output or running statistic beyond tolerance (BatchNorm over a few values per channel
    magnifies round-off) is excused only where the port in float64 gives torch's float64 step; a port whose float64
    build updates its statistics otherwise is not (checks.py `_train_step_equal_in_float64`)."""
    import numpy as np

    equivalence = Equivalence(PortedPair(converted("vgg_small")))
    case = Case(3, 0.0, 0, 4)
    inputs = equivalence.inputs(case)
    model = equivalence._float64_keras()
    statistics = keras_layer_at(model, "features.1").running_var.numpy()
    assert equivalence._train_step_equal_in_float64(case, inputs, 0)
    assert equivalence._train_step_equal_in_float64(case, inputs, "features.1.running_var")
    np.testing.assert_array_equal(keras_layer_at(model, "features.1").running_var.numpy(), statistics)  # restored
    equivalence._step64 = None
    keras_layer_at(model, "features.1").momentum = 0.5
    assert equivalence._train_step_equal_in_float64(case, inputs, 0)  # momentum moves no output
    assert not equivalence._train_step_equal_in_float64(case, inputs, "features.1.running_var")


def test_an_eval_output_as_precise_as_torchs_own_float32_is_round_off_and_a_port_error_is_not(converted):
    """Large inputs through a saturating gate (timm's MobileNetV3: hard-sigmoid squeeze-excite at inputs x140)
    magnify float32 round-off in torch as in the port: an output beyond 1e-4 counts as equal where the port is as
    precise as torch's own float32 against torch in float64 (checks.py `_as_precise_as_torch`); a moved weight is
    not."""
    import numpy as np

    equivalence = Equivalence(PortedPair(converted("vgg_small")))
    case = Case(2, 0.0, 0, 3)
    inputs = equivalence.inputs(case)
    want, got = equivalence.pair.run_torch(inputs)[0], equivalence.pair.run_keras(inputs)[0]
    assert equivalence._as_precise_as_torch(case, inputs, 0, want, got, 1)
    layer = keras_layer_at(equivalence.pair.keras_model, "features.0")
    layer.weight.assign(layer.weight * np.float32(1.001))  # a port error of a tenth of a percent
    try:
        moved = equivalence.pair.run_keras(inputs)[0]
        assert not equivalence._as_precise_as_torch(case, inputs, 0, want, moved, 1)
    finally:
        equivalence.pair.reset()
