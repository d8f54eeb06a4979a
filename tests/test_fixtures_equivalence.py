"""Every fixture converts with exit 0 and its Keras port matches torch (eager and jit_compile=True).

Parameters and BatchNorm statistics are moved off their defaults first; layouts are checked by counting
Transpose ops in the traced graph (convnets <= 2, sequence and attention models none).
"""

from pathlib import Path

import numpy as np
import pytest

from porter.convert import ConvertOptions
from porter.output import write_tree
from porter.verify.compare import assert_equivalent
from porter.verify.harness import PortedPair, count_transposes
from porter.verify.torch_bridge import torch_state_numpy
from tests.in_process import convert  # porter convert's collector settings (tests/in_process.py)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# fixture -> most Transpose ops allowed in its traced inference graph
CONVNETS = {"lenet", "vgg_small", "resnet", "mobilenetv2", "depthwise_separable", "unet", "se_block",
            "conv3d_video", "superres", "train_mnist", "audio_conv1d", "vit"}
SEQUENCE_MODELS = {"mlp", "lstm_tagger", "gru_encoder", "gpt_mini", "recommender", "transformer_classifier",
                   "train_lm"}


def fixture_names():
    return sorted(p.stem for p in FIXTURES.glob("*.py"))


def test_every_fixture_is_classified():
    assert set(fixture_names()) == CONVNETS | SEQUENCE_MODELS


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    cache = {}

    def get(name):
        if name not in cache:
            out = tmp_path_factory.mktemp(name) / "out"
            conversion = convert(ConvertOptions(FIXTURES / f"{name}.py", out))
            write_tree(out, conversion.files)
            cache[name] = (conversion, PortedPair(out))
        return cache[name]

    return get


@pytest.mark.parametrize("name", fixture_names())
def test_fixture_matches_torch(name, converted):
    conversion, pair = converted(name)
    assert conversion.exit_code == 0, conversion.manifest
    for batch in (1, 3):
        inputs = pair.example_inputs(batch=batch, seed=batch)
        expected = pair.run_torch(inputs)
        for jit in (False, True):
            actual = pair.run_keras(inputs, jit=jit)
            assert len(actual) == len(expected), f"{name}: {len(actual)} Keras outputs, torch {len(expected)}"
            for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
                assert_equivalent(want, got, tolerance=1e-4, what=f"{name} output {index} batch {batch} jit={jit}")


@pytest.mark.parametrize("name", fixture_names())
def test_fixture_layout_costs_no_transposes(name, converted):
    _, pair = converted(name)
    inputs = pair.example_inputs(batch=2)
    limit = 2 if name in CONVNETS else 0
    assert count_transposes(pair.keras_model, inputs) <= limit


@pytest.mark.parametrize("name", sorted(CONVNETS - {"conv3d_video"}))  # conv3d_video takes (N, T, C, H, W)
def test_convnet_with_channels_last_io_matches_torch_without_transposes(name, converted):
    """`model.channels_last_io = True`: images in (and image outputs) channels-last, the same numbers as torch,
    and not one Transpose in the traced graph."""
    _, pair = converted(name)
    switched = [bool(spec.get("channels_last_io")) for spec in pair.class_entry["example_inputs"]]
    assert any(switched), f"{name}: no input switches to channels-last"
    inputs = pair.example_inputs(batch=2, seed=5)
    expected = pair.run_torch(inputs)
    channels_last_inputs = [np.moveaxis(x, 1, -1) if on else x for x, on in zip(inputs, switched, strict=True)]
    pair.keras_model.channels_last_io = True
    try:
        for jit in (False, True):
            actual = pair.run_keras(channels_last_inputs, jit=jit)
            for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
                if want.ndim > 2 and got.shape == np.moveaxis(want, 1, -1).shape != want.shape:
                    want = np.moveaxis(want, 1, -1)  # an image output, channels-last too
                assert_equivalent(want, got, tolerance=1e-4, what=f"{name} output {index} jit={jit}")
        assert count_transposes(pair.keras_model, channels_last_inputs) == 0
    finally:
        pair.keras_model.channels_last_io = False


def poison_embedding(pair, inputs):
    """NaN in the first Embedding's row of a token the inputs lack, +Inf in one element of another such row.

    Integer inputs cannot carry NaN/Inf themselves, so the non-finite values enter through a parameter. With the
    output projection tied to the embedding (gpt_mini's lm_head) they reach the logits as one NaN column and one
    column of infinities whose signs follow the hidden state; NaN in a row the inputs use would instead reach every
    output through attention (0 * NaN), leaving no finite element to compare.
    """
    import torch

    embedding = next(m for m in pair.torch_model.modules() if isinstance(m, torch.nn.Embedding))
    nan_token, inf_token = sorted(set(range(embedding.num_embeddings)) - set(np.unique(inputs[0]).tolist()))[-2:]
    with torch.no_grad():
        embedding.weight[nan_token] = float("nan")
        embedding.weight[inf_token, 0] = float("inf")
    pair.keras_module.load_state_dict(pair.keras_model, torch_state_numpy(pair.torch_model))


@pytest.mark.parametrize("name", ["resnet", "gpt_mini"])
def test_non_finite_values_keep_their_pattern(name, converted):
    """NaN/Inf reach the outputs in the same elements, with the same sign, and the finite elements still match."""
    _, pair = converted(name)
    inputs = pair.example_inputs(batch=2)
    try:
        if inputs[0].dtype.kind == "f":
            inputs[0] = inputs[0].copy()
            inputs[0].flat[0] = np.inf
            inputs[0].flat[5] = np.nan
        else:
            poison_embedding(pair, inputs)
        expected, actual = pair.run_torch(inputs), pair.run_keras(inputs)
    finally:
        pair.reset()
    assert len(expected) == len(actual), f"{len(actual)} Keras outputs for {len(expected)} torch outputs"
    # the case must inject something: some output elements non-finite, and some finite left to compare
    assert any((~np.isfinite(want)).any() for want in expected), f"{name}: no NaN/Inf reached the outputs"
    assert any(np.isfinite(want).any() for want in expected), f"{name}: no finite output element left"
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        assert_equivalent(want, got, tolerance=1e-4, what=f"{name} output {index} with NaN/Inf")
