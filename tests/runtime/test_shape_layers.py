"""Numeric tests of porter.runtime.shape_layers against torch.nn.Flatten / Unflatten / Softmax2d."""


import numpy as np
import pytest
import tensorflow as tf
import torch
from hypothesis import given
from hypothesis import strategies as st

from porter.rules import registry
from porter.runtime import shape_layers as S
from porter.runtime.base import to_channels_first, to_channels_last
from porter.verify.compare import assert_equivalent
from tests.runtime.rule_families import family_rules


@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=5), data=st.data(), seed=st.integers(0, 2**16))
def test_flatten_matches_torch(shape, data, seed):
    rank = len(shape)
    start = data.draw(st.integers(-rank, rank - 1))
    end = data.draw(st.integers(-rank, rank - 1))
    if start % rank > end % rank:
        start, end = end, start
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    expected = torch.nn.Flatten(start, end)(torch.from_numpy(x)).numpy()
    layer = S.Flatten(start, end)
    assert np.array_equal(expected, np.asarray(layer(x)))
    # unknown sizes at trace time (the batch, or every axis) under XLA
    for unknown in ([None] + shape[1:], [None] * rank):
        compiled = tf.function(layer, jit_compile=True, input_signature=[tf.TensorSpec(unknown, tf.float32)])
        assert np.array_equal(expected, np.asarray(compiled(tf.constant(x))))
    traced = tf.function(layer).get_concrete_function(tf.TensorSpec([None] + shape[1:], tf.float32))
    static = [None] + list(expected.shape[1:])
    assert traced.structured_outputs.shape.as_list() == static  # every size but the batch stays static


def test_flatten_defaults_and_errors():
    x = np.zeros((2, 3, 4, 5), np.float32)
    assert S.Flatten()(x).shape == (2, 60)
    assert S.Flatten(0)(x).shape == (120,)
    with pytest.raises(ValueError, match="start_dim"):
        S.Flatten(2, 1)(x)
    with pytest.raises(IndexError):
        S.Flatten(1, 4)(x)
    assert S.Flatten(2, 3).get_config()["start_dim"] == 2


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data(), seed=st.integers(0, 2**16))
def test_unflatten_matches_torch(shape, data, seed):
    rank = len(shape)
    dim = data.draw(st.integers(-rank, rank - 1))
    parts = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    shape[dim] = int(np.prod(parts))
    sizes = list(parts)
    if data.draw(st.booleans()):
        sizes[data.draw(st.integers(0, len(sizes) - 1))] = -1
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    expected = torch.nn.Unflatten(dim, tuple(sizes))(torch.from_numpy(x)).numpy()
    layer = S.Unflatten(dim, tuple(sizes))
    assert np.array_equal(expected, np.asarray(layer(x)))
    compiled = tf.function(layer, jit_compile=True, input_signature=[tf.TensorSpec([None] + shape[1:], tf.float32)])
    assert np.array_equal(expected, np.asarray(compiled(tf.constant(x))))


def test_unflatten_errors_and_config():
    x = np.zeros((2, 12), np.float32)
    with pytest.raises(ValueError, match="multiply"):
        S.Unflatten(1, (5, 2))(x)
    with pytest.raises(ValueError, match="inferred"):
        S.Unflatten(1, (-1, -1))(x)
    assert S.Unflatten(1, torch.Size([3, 4]))(x).shape == (2, 3, 4)
    assert S.Unflatten(-1, [2, -1]).get_config()["unflattened_size"] == [2, -1]


@given(batched=st.booleans(), channels=st.integers(1, 6), height=st.integers(1, 5), width=st.integers(1, 5),
       exponent=st.integers(-3, 3), seed=st.integers(0, 2**16))
def test_softmax2d_matches_torch(batched, channels, height, width, exponent, seed):
    shape = ((2,) if batched else ()) + (channels, height, width)
    x = (np.random.default_rng(seed).standard_normal(shape) * 10.0 ** exponent).astype(np.float32)
    expected = torch.nn.Softmax2d()(torch.from_numpy(x)).numpy()
    actual = to_channels_first(S.Softmax2d()(to_channels_last(tf.constant(x))))
    assert_equivalent(expected, np.asarray(actual), 1e-6)


def test_softmax2d_jit_and_rank_check():
    x = np.random.default_rng(0).standard_normal((3, 4, 5, 6)).astype(np.float32)
    compiled = tf.function(S.Softmax2d(), jit_compile=True, input_signature=[tf.TensorSpec([None, 4, 5, 6])])
    expected = torch.nn.Softmax2d()(torch.from_numpy(x).permute(0, 3, 1, 2)).permute(0, 2, 3, 1).numpy()
    assert_equivalent(expected, np.asarray(compiled(tf.constant(x))), 1e-6)
    with pytest.raises(ValueError, match="3D or 4D"):
        S.Softmax2d()(np.zeros((2, 3), np.float32))


def test_rules_resolve():
    rules = [rule for rule in family_rules("shape_layers") if isinstance(rule, registry.ModuleRule)]
    assert sorted(rule.runtime for rule in rules) == ["Flatten", "Softmax2d", "Unflatten"]
    for rule in rules:
        assert rule.layout == getattr(S, rule.runtime).porter_layout
