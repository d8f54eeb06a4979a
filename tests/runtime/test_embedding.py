"""Numeric tests of porter.runtime.embedding against torch.nn.Embedding / EmbeddingBag / F.one_hot."""

import inspect

import numpy as np
import pytest
import tensorflow as tf
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.rules import registry
from porter.runtime import embedding as E
from porter.verify.compare import assert_equivalent
from porter.verify.torch_bridge import copy_torch_weights
from tests.runtime.rule_families import family_rules

TOLERANCE = 1e-6


def _dense(gradient):
    return np.asarray(tf.convert_to_tensor(gradient))


def _tf_weight_gradient(call, weight, upstream):
    with tf.GradientTape() as tape:
        y = call()
        loss = tf.reduce_sum(y * upstream)
    return _dense(tape.gradient(loss, weight))


@given(num=st.integers(2, 12), dim=st.integers(1, 6), index_shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       padding=st.one_of(st.none(), st.integers(-2, 1)), scale_grad=st.booleans(), seed=st.integers(0, 2**16))
def test_embedding_matches_torch_forward_and_gradient(num, dim, index_shape, padding, scale_grad, seed):
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    reference = torch.nn.Embedding(num, dim, padding_idx=padding, scale_grad_by_freq=scale_grad)
    with torch.no_grad():  # the padding row too: torch returns it as it is in the forward
        reference.weight.normal_()
    ported = copy_torch_weights(reference, E.Embedding(num, dim, padding_idx=padding, scale_grad_by_freq=scale_grad))
    ids = rng.integers(0, num, index_shape)
    if padding is not None:
        ids.reshape(-1)[0] = padding % num  # the padding row is used at least once
    upstream = rng.standard_normal((*index_shape, dim)).astype(np.float32)
    y = reference(torch.from_numpy(ids))
    (y * torch.from_numpy(upstream)).sum().backward()
    assert_equivalent(y.detach().numpy(), np.asarray(ported(ids)), TOLERANCE)
    gradient = _tf_weight_gradient(lambda: ported(ids), ported.weight, upstream)
    assert_equivalent(reference.weight.grad.numpy(), gradient, TOLERANCE, "weight gradient")
    if padding is not None:
        assert np.all(gradient[padding % num] == 0)
    # functional form on the same table
    weight = tf.Variable(reference.weight.detach().numpy())
    expected = F.embedding(torch.from_numpy(ids), reference.weight, padding, scale_grad_by_freq=scale_grad)
    assert_equivalent(expected.detach().numpy(), np.asarray(E.embedding(ids, weight, padding, None, 2.0, scale_grad)))
    gradient = _tf_weight_gradient(lambda: E.embedding(ids, weight, padding, scale_grad_by_freq=scale_grad), weight,
                                   upstream)
    assert_equivalent(reference.weight.grad.numpy(), gradient, TOLERANCE, "F.embedding weight gradient")


def test_embedding_init_and_state():
    layer = E.Embedding(7, 3, padding_idx=-1)
    assert layer.padding_idx == 6
    weight = layer.weight.numpy()
    assert np.all(weight[6] == 0) and np.all(weight[:6] != 0)
    assert [entry.key for entry in layer.torch_state("emb.")] == ["emb.weight"]
    assert layer.get_config()["padding_idx"] == 6
    with pytest.raises(ValueError, match="padding_idx"):
        E.Embedding(4, 2, padding_idx=4)


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 5), max_norm=st.floats(0.3, 3.0),
       norm_type=st.sampled_from([1.0, 2.0, 3.0]), bag=st.booleans(), data=st.data())
def test_max_norm_renormalises_the_referenced_rows_in_place_as_torch(batch, length, max_norm, norm_type, bag, data):
    """nn.Embedding / nn.EmbeddingBag and F.embedding with max_norm: same outputs, same weight afterwards (the
    referenced rows scaled to the norm in place), same gradient as torch."""
    ids = np.array(data.draw(st.lists(st.lists(st.integers(0, 7), min_size=length, max_size=length),
                                      min_size=batch, max_size=batch)), np.int64)
    rows = np.random.default_rng(length).standard_normal((8, 3)).astype(np.float32) * 2
    make = (lambda: torch.nn.EmbeddingBag(8, 3, max_norm=max_norm, norm_type=norm_type, mode="sum")) if bag \
        else (lambda: torch.nn.Embedding(8, 3, max_norm=max_norm, norm_type=norm_type))
    torch_layer = make()
    with torch.no_grad():
        torch_layer.weight.copy_(torch.from_numpy(rows))
    expected = torch_layer(torch.from_numpy(ids))
    upstream = np.random.default_rng(batch).standard_normal(tuple(expected.shape)).astype(np.float32)
    (expected * torch.from_numpy(upstream)).sum().backward()
    layer = (E.EmbeddingBag(8, 3, max_norm=max_norm, norm_type=norm_type, mode="sum") if bag
             else E.Embedding(8, 3, max_norm=max_norm, norm_type=norm_type))
    layer.weight.assign(rows)
    with tf.GradientTape() as tape:
        actual = layer(ids)
        loss = tf.reduce_sum(actual * upstream)
    gradient = _dense(tape.gradient(loss, layer.weight))
    assert_equivalent(expected.detach().numpy(), actual.numpy(), tolerance=TOLERANCE)
    assert_equivalent(torch_layer.weight.detach().numpy(), layer.weight.numpy(), tolerance=TOLERANCE)
    assert_equivalent(torch_layer.weight.grad.numpy(), gradient, tolerance=TOLERANCE)
    weight = tf.Variable(rows)
    functional = E.embedding(ids, weight, max_norm=max_norm, norm_type=norm_type)
    torch_weight = torch.from_numpy(rows.copy())
    assert_equivalent(F.embedding(torch.from_numpy(ids), torch_weight, max_norm=max_norm, norm_type=norm_type).numpy(),
                      functional.numpy(), tolerance=TOLERANCE)
    assert_equivalent(torch_weight.numpy(), weight.numpy(), tolerance=TOLERANCE)


def test_embedding_from_pretrained():
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    reference = torch.nn.Embedding.from_pretrained(torch.from_numpy(table), padding_idx=1)
    layer = E.Embedding.from_pretrained(table, padding_idx=1)
    ids = np.array([[1, 2], [3, 1]])
    assert_equivalent(reference(torch.from_numpy(ids)).numpy(), np.asarray(layer(ids)), 0)
    assert not layer.weight.trainable and layer.trainable_weights == []
    assert E.Embedding.from_pretrained(table, freeze=False).weight.trainable
    bag = E.EmbeddingBag.from_pretrained(table, mode="sum")
    expected = torch.nn.EmbeddingBag.from_pretrained(torch.from_numpy(table), mode="sum")(torch.from_numpy(ids))
    assert_equivalent(expected.numpy(), np.asarray(bag(ids)), 0)
    assert not bag.weight.trainable


def test_embedding_tied_weight_keys():
    layer = E.Embedding(5, 4)
    state = {"weight": np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)}
    from porter.runtime.base import load_state_dict
    load_state_dict(layer, state)
    assert np.array_equal(layer.weight.numpy(), state["weight"])


def _offsets_strategy():
    return st.lists(st.integers(0, 6), min_size=1, max_size=5)


@given(mode=st.sampled_from(["sum", "mean", "max"]), num=st.integers(3, 10), dim=st.integers(1, 5),
       two_d=st.booleans(), bag_sizes=_offsets_strategy(), length=st.integers(1, 5),
       padding=st.one_of(st.none(), st.integers(0, 2)), weighted=st.booleans(), include_last=st.booleans(),
       seed=st.integers(0, 2**16))
def test_embedding_bag_matches_torch(mode, num, dim, two_d, bag_sizes, length, padding, weighted, include_last, seed):
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    weighted = weighted and mode == "sum"
    include_last = include_last and not two_d
    reference = torch.nn.EmbeddingBag(num, dim, mode=mode, padding_idx=padding, include_last_offset=include_last)
    with torch.no_grad():
        reference.weight.normal_()
    ported = copy_torch_weights(reference, E.EmbeddingBag(num, dim, mode=mode, padding_idx=padding,
                                                          include_last_offset=include_last))
    if two_d:
        ids, offsets = rng.integers(0, num, (len(bag_sizes), length)), None
    else:  # bags of the drawn sizes, empty ones included
        ids = rng.integers(0, num, sum(bag_sizes))
        offsets = np.concatenate([[0], np.cumsum(bag_sizes)[:-1]])
        if include_last:
            offsets = np.concatenate([offsets, [ids.size]])
    if padding is not None and ids.size:
        ids.reshape(-1)[::3] = padding
    weights = rng.uniform(-2, 2, ids.shape).astype(np.float32) if weighted else None
    torch_args = [torch.from_numpy(ids), None if offsets is None else torch.from_numpy(offsets)]
    y = reference(*torch_args, per_sample_weights=None if weights is None else torch.from_numpy(weights))
    upstream = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    (y * torch.from_numpy(upstream)).sum().backward()
    actual = ported(ids, offsets, weights)
    assert_equivalent(y.detach().numpy(), np.asarray(actual), TOLERANCE)
    gradient = _tf_weight_gradient(lambda: ported(ids, offsets, weights), ported.weight, upstream)
    assert_equivalent(reference.weight.grad.numpy(), gradient, TOLERANCE, "weight gradient")
    expected_f = F.embedding_bag(torch_args[0], reference.weight, torch_args[1], mode=mode, padding_idx=padding,
                                 include_last_offset=include_last,
                                 per_sample_weights=None if weights is None else torch.from_numpy(weights))
    actual_f = E.embedding_bag(ids, ported.weight, offsets, mode=mode, padding_idx=padding,
                               include_last_offset=include_last, per_sample_weights=weights)
    assert_equivalent(expected_f.detach().numpy(), np.asarray(actual_f), TOLERANCE)


def test_embedding_bag_argument_errors():
    with pytest.raises(NotImplementedError, match="per_sample_weights"):
        E.embedding_bag(np.zeros((2, 2), np.int64), tf.ones((3, 2)), mode="mean",
                        per_sample_weights=np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="offsets has to be None"):
        E.embedding_bag(np.zeros((2, 2), np.int64), tf.ones((3, 2)), offsets=np.array([0]))
    with pytest.raises(ValueError, match="1D with offsets"):
        E.embedding_bag(np.zeros((4,), np.int64), tf.ones((3, 2)))
    with pytest.raises(ValueError, match="mode"):
        E.EmbeddingBag(3, 2, mode="median")


def test_jit_compile_embedding_and_bag_unknown_sizes():
    layer = E.Embedding(20, 8, padding_idx=0)
    ids = np.random.default_rng(0).integers(0, 20, (3, 7))
    compiled = tf.function(layer, jit_compile=True, input_signature=[tf.TensorSpec([None, None], tf.int64)])
    assert_equivalent(np.asarray(layer(ids)), np.asarray(compiled(tf.constant(ids))), 0)
    bag = E.EmbeddingBag(20, 8, mode="max", padding_idx=0)
    flat, offsets = ids.reshape(-1), np.array([0, 0, 5, 9, 21])
    compiled_bag = tf.function(bag, jit_compile=True, input_signature=[tf.TensorSpec([None], tf.int64),
                                                                        tf.TensorSpec([5], tf.int64)])
    expected = F.embedding_bag(torch.from_numpy(flat), torch.from_numpy(bag.weight.numpy()), torch.from_numpy(offsets),
                               mode="max", padding_idx=0).numpy()
    assert_equivalent(expected, np.asarray(compiled_bag(tf.constant(flat), tf.constant(offsets))), TOLERANCE)


def test_mixed_precision_output_dtype():
    import keras

    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        layer, bag = E.Embedding(6, 4), E.EmbeddingBag(6, 4)
    finally:
        keras.config.set_dtype_policy("float32")
    assert layer.weight.dtype == "float32"
    assert layer(np.array([1, 2])).dtype == tf.bfloat16
    assert bag(np.array([[1, 2]])).dtype == tf.bfloat16


@given(shape=st.lists(st.integers(1, 5), max_size=3), classes=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_one_hot_matches_torch(shape, classes, seed):
    ids = np.random.default_rng(seed).integers(0, classes, shape)
    expected = F.one_hot(torch.from_numpy(ids), classes).numpy()
    actual = np.asarray(E.one_hot(ids, classes))
    assert actual.dtype == np.int64 and np.array_equal(expected, actual)
    assert np.array_equal(expected, np.asarray(E.one_hot(tf.constant(ids, tf.int32), num_classes=np.int64(classes))))


def test_one_hot_requires_num_classes():
    with pytest.raises(ValueError, match="num_classes"):
        E.one_hot(np.array([1, 2]))
    with pytest.raises(ValueError, match="num_classes"):
        E.one_hot(np.array([1, 2]), tf.constant(3))


def test_rules_resolve_and_signatures_fit_runtime():
    rules = family_rules("embedding")
    assert len(rules) == 5
    for rule in rules:
        target = getattr(E, rule.runtime)
        assert rule.layout == "source"
        if isinstance(rule, registry.FunctionRule):
            assert list(inspect.signature(target).parameters) == list(rule.signature.params), rule.names
        else:
            assert issubclass(target, E.TorchLayer)
