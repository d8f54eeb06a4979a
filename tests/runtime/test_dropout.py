"""Tests of porter.runtime.dropout: inference is the identity, training matches torch's structure and scaling."""

import inspect
import math

import numpy as np
import pytest
import tensorflow as tf
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from porter.rules import registry
from porter.runtime import dropout as D
from porter.runtime.base import to_channels_first, to_channels_last
from porter.verify.compare import assert_equivalent
from tests.runtime.rule_families import family_rules

LAYERS = ["Dropout", "AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"]
FUNCTIONS = {"Dropout": "dropout", "AlphaDropout": "alpha_dropout", "Dropout1d": "dropout1d",
             "Dropout2d": "dropout2d", "Dropout3d": "dropout3d", "FeatureAlphaDropout": "feature_alpha_dropout"}
RANKS = {"Dropout": (1, 2, 3, 4), "AlphaDropout": (1, 2, 3), "Dropout1d": (2, 3), "Dropout2d": (3, 4),
         "Dropout3d": (4, 5), "FeatureAlphaDropout": (2, 3, 4, 5)}
ALPHA = 1.7580993408473766


@pytest.mark.filterwarnings("ignore:dropout2d")
@pytest.mark.parametrize("name", LAYERS)
@given(data=st.data(), p=st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]), seed=st.integers(0, 2**16))
def test_inference_and_p0_are_exact_identity(name, data, p, seed):
    rank = data.draw(st.sampled_from(RANKS[name]))
    shape = data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    layer = getattr(D, name)(p)
    function = getattr(D, FUNCTIONS[name])
    for y in (layer(x), layer(x, training=False), function(x, p, training=False), function(x, p, False, True)):
        assert np.array_equal(np.asarray(y), x)
    expected = getattr(torch.nn, name)(p).eval()(torch.from_numpy(x)).numpy()
    assert np.array_equal(expected, x)
    if p == 0:
        assert np.array_equal(np.asarray(layer(x, training=True)), x)
        assert np.array_equal(np.asarray(function(x, 0.0, training=True)), x)


def _dropped_fraction_bounds(p, trials):
    sigma = math.sqrt(p * (1 - p) / trials)
    return p - 5 * sigma - 1e-9, p + 5 * sigma + 1e-9


@given(p=st.floats(0.05, 0.95), seed=st.integers(0, 2**16), functional=st.booleans())
def test_dropout_training_zeros_fraction_and_scales_like_torch(p, seed, functional):
    x = np.random.default_rng(seed).uniform(1.0, 2.0, (40, 250)).astype(np.float32)
    y = np.asarray(D.dropout(x, p, training=True) if functional else D.Dropout(p)(x, training=True))
    kept = y != 0
    low, high = _dropped_fraction_bounds(p, x.size)
    assert low <= 1 - kept.mean() <= high
    # torch's scale for the kept elements, read off a real torch dropout
    torch_y = F.dropout(torch.from_numpy(x), p, training=True).numpy()
    torch_kept = torch_y != 0
    torch_scale = torch_y[torch_kept] / x[torch_kept]
    assert_equivalent(np.full(kept.sum(), torch_scale.mean(), np.float32), y[kept] / x[kept], 1e-6)
    assert_equivalent(x[kept] / (1 - p), y[kept], 1e-6)


@pytest.mark.filterwarnings("ignore:dropout2d")
@pytest.mark.parametrize("name,rank", [("Dropout1d", 3), ("Dropout1d", 2), ("Dropout2d", 4), ("Dropout2d", 3),
                                       ("Dropout3d", 5), ("Dropout3d", 4)])
@given(p=st.floats(0.1, 0.9), seed=st.integers(0, 2**16), functional=st.booleans())
def test_channel_dropout_drops_whole_channels(name, rank, p, seed, functional):
    """Channels-last input: every torch (n, c) slice is either all zero or all x / (1 - p)."""
    shape = {5: (12, 16, 2, 3, 2), 4: (12, 16, 3, 2), 3: (12, 16, 5), 2: (64, 5)}[rank]
    x = np.random.default_rng(seed).uniform(1.0, 2.0, shape).astype(np.float32)
    layer = getattr(D, name)(p)
    x_last = to_channels_last(tf.constant(x))
    y_last = getattr(D, FUNCTIONS[name])(x_last, p, training=True) if functional else layer(x_last, training=True)
    y = np.asarray(to_channels_first(y_last))
    torch_y = getattr(torch.nn, name)(p).train()(torch.from_numpy(x)).numpy()
    # torch's channel structure: unbatched inputs (Dropout1d 2-D, Dropout3d 4-D) drop along dim 0
    unbatched = (name, rank) in (("Dropout1d", 2), ("Dropout3d", 4))
    channel_axes = 1 if unbatched else 2
    for out in (y, torch_y):
        slices = out.reshape(int(np.prod(shape[:channel_axes])), -1)
        source = x.reshape(slices.shape)
        zero = np.all(slices == 0, axis=1)
        assert np.all(zero | np.all(slices != 0, axis=1)), "a channel is partly dropped"
        assert_equivalent(source[~zero] / (1 - p), slices[~zero], 1e-6)
    kept = np.asarray(y.reshape(int(np.prod(shape[:channel_axes])), -1)[:, 0] != 0)
    low, high = _dropped_fraction_bounds(p, kept.size)
    assert low <= 1 - kept.mean() <= high


@pytest.mark.parametrize("name", ["AlphaDropout", "FeatureAlphaDropout"])
@given(p=st.floats(0.1, 0.9), seed=st.integers(0, 2**16))
def test_alpha_dropout_matches_torch_affine_maps(name, p, seed):
    """Kept: a x + alpha a p; dropped: -alpha a + alpha a p (torch's formula, checked on torch's own output)."""
    x = np.random.default_rng(seed).uniform(1.0, 2.0, (20, 30, 4)).astype(np.float32)
    a = 1.0 / math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))
    dropped_value = -ALPHA * a + ALPHA * a * p
    torch_y = getattr(torch.nn, name)(p).train()(torch.from_numpy(x)).numpy()
    layer = getattr(D, name)(p)
    y = np.asarray(to_channels_first(layer(to_channels_last(tf.constant(x)), training=True)))
    for out in (torch_y, y):
        dropped = np.isclose(out, dropped_value, rtol=0, atol=1e-6)
        assert_equivalent(a * x[~dropped] + ALPHA * a * p, out[~dropped], 1e-6)
        if name == "FeatureAlphaDropout":  # whole (n, c) channels
            per_channel = dropped.reshape(20 * 30, 4)
            assert np.all(per_channel.all(axis=1) | ~per_channel.any(axis=1))
        low, high = _dropped_fraction_bounds(p, dropped.size if name == "AlphaDropout" else 600)
        assert low <= dropped.mean() <= high


def test_p_one_gives_zeros_and_bad_p_raises():
    x = np.ones((3, 4), np.float32)
    assert np.array_equal(np.asarray(D.Dropout(1.0)(x, training=True)), np.zeros_like(x))
    assert np.array_equal(np.asarray(D.alpha_dropout(x, 1.0, training=True)), np.zeros_like(x))
    with pytest.raises(ValueError, match="between 0 and 1"):
        D.Dropout(1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        D.dropout(x, -0.1)


def test_tensor_training_flag():
    x = np.ones((50, 40), np.float32)
    assert np.array_equal(np.asarray(D.Dropout(0.5)(x, training=tf.constant(False))), x)
    y = np.asarray(D.dropout(x, 0.5, training=tf.constant(True)))
    assert set(np.unique(y)) == {0.0, 2.0}


def test_jit_compile_training_draws_fresh_masks():
    layer = D.Dropout2d(0.5)
    compiled = tf.function(lambda t: layer(t, training=True), jit_compile=True,
                           input_signature=[tf.TensorSpec([None, 3, 3, 64], tf.float32)])
    x = tf.ones((8, 3, 3, 64))
    first, second = np.asarray(compiled(x)), np.asarray(compiled(x))
    assert set(np.unique(first)) == {0.0, 2.0}
    assert not np.array_equal(first, second)
    assert np.all(first.min(axis=(1, 2)) == first.max(axis=(1, 2)))  # whole channels
    functional = tf.function(lambda t: D.dropout(t, 0.25, training=True), jit_compile=True)
    y1, y2 = np.asarray(functional(x)), np.asarray(functional(x))
    assert not np.array_equal(y1, y2)
    assert_equivalent(np.float32(4 / 3), y1[y1 != 0].max(), 1e-7)
    inference = tf.function(lambda t: layer(t), jit_compile=True)
    assert np.array_equal(np.asarray(inference(x)), np.ones((8, 3, 3, 64), np.float32))


def test_mixed_precision_keeps_dtype():
    x = tf.ones((4, 6), tf.float16)
    assert D.dropout(x, 0.3, training=True).dtype == tf.float16
    assert D.alpha_dropout(x, 0.3, training=True).dtype == tf.float16


def test_layers_keep_independent_seed_state():
    x = np.ones((10, 50), np.float32)
    a, b = D.Dropout(0.5), D.Dropout(0.5)
    assert not np.array_equal(np.asarray(a(x, training=True)), np.asarray(b(x, training=True)))
    assert D.Dropout(0.0).seed_generator is None
    assert D.Dropout(0.3).get_config()["p"] == 0.3


def test_rules_resolve_and_signatures_fit_runtime():
    rules = family_rules("dropout")
    assert len(rules) == 12
    for rule in rules:
        target = getattr(D, rule.runtime)
        if isinstance(rule, registry.FunctionRule):
            params = list(inspect.signature(target).parameters)
            assert params == list(rule.signature.params), rule.names
            assert rule.training_param == "training"
        else:
            assert rule.training and issubclass(target, D.TorchLayer)
            assert rule.layout == target.porter_layout
