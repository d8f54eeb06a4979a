"""The lookup feed of porter.runtime.embedding (LookupFeed): with the feed off a layer gathers as before; "capture"
records the ids the model passes and reads no table; "feed" returns the given activations in place of the lookup,
with torch's padding_idx gradient rule kept. train_support's TPU embedding step is built on these."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from porter.runtime import embedding as E
from porter.runtime.helpers import init_normal
from porter.runtime.init_ops import assign_in_place, fill_slice_in_place
from porter.runtime.module import TorchModule, new_parameter

RNG = np.random.default_rng(0)


def _table(layer):
    layer.weight.assign(RNG.standard_normal(tuple(layer.weight.shape)).astype(np.float32))
    return layer


def _run(layer, mode, *args, activations=()):
    layer.lookup_feed.mode, layer.lookup_feed.calls, layer.lookup_feed.activations = mode, [], list(activations)
    try:
        return layer(*args), layer.lookup_feed.calls
    finally:
        layer.lookup_feed.mode = None


@pytest.mark.parametrize("make, args", [
    (lambda: E.Embedding(12, 3, padding_idx=2), (RNG.integers(0, 12, (4, 5)),)),
    (lambda: E.EmbeddingBag(12, 3, mode="mean"), (RNG.integers(0, 12, (4, 5)),)),
    (lambda: E.EmbeddingBag(12, 3, mode="sum", include_last_offset=True), (RNG.integers(0, 12, 7),
                                                                           np.array([0, 2, 2, 7]))),
])
def test_fed_activations_replace_the_lookup_and_capture_records_the_ids(make, args):
    layer = _table(make())
    expected = layer(*args)
    fed, _ = _run(layer, "feed", *args, activations=[expected])
    np.testing.assert_array_equal(fed.numpy(), expected.numpy())
    zeros, calls = _run(layer, "capture", *args)
    assert zeros.shape == expected.shape and not np.any(zeros.numpy())
    assert len(calls) == 1
    if len(args) == 1:
        np.testing.assert_array_equal(calls[0].numpy(), args[0])
    else:  # 1-D ids with offsets: the bags as rows of a RaggedTensor (include_last_offset drops the tail)
        assert calls[0].to_list() == [list(args[0][:2]), [], list(args[0][2:7])]
    np.testing.assert_array_equal(layer(*args).numpy(), expected.numpy())  # feed off: the normal path again


def test_capture_reads_no_table():
    layer = E.Embedding(5, 2)
    with tf.GradientTape() as tape:
        zeros, _ = _run(layer, "capture", np.array([[1, 2]]))
    assert tape.gradient(tf.reduce_sum(zeros), layer.weight) is None


def test_fed_lookup_passes_no_gradient_at_padding_positions():
    """As the dense path (torch keeps the padding row's gradient at zero): the activations' gradient is zero where
    the id is padding_idx, so the TPU embedding API never updates that row."""
    layer = E.Embedding(6, 2, padding_idx=0)
    ids = np.array([[0, 1, 0, 3]])
    activations = tf.constant(RNG.standard_normal((1, 4, 2)).astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(activations)
        fed, _ = _run(layer, "feed", ids, activations=[activations])
        loss = tf.reduce_sum(fed * fed)
    gradient = tape.gradient(loss, activations).numpy()
    np.testing.assert_array_equal(gradient[0, [0, 2]], 0)
    np.testing.assert_allclose(gradient[0, [1, 3]], 2 * activations.numpy()[0, [1, 3]])


def test_feed_checks_the_shape_and_the_number_of_calls():
    layer = E.Embedding(6, 2)
    with pytest.raises(ValueError, match="do not fit"):
        _run(layer, "feed", np.array([[1, 2]]), activations=[tf.zeros((1, 3, 2))])
    with pytest.raises(ValueError, match="more often"):
        _run(layer, "feed", np.array([[1, 2]]))


def test_per_sample_weights_are_not_fed():
    """A capture notes them (train_tpu.py's plan then keeps the table dense); a feed refuses them."""
    layer = E.EmbeddingBag(6, 2, mode="sum")
    _run(layer, "capture", np.array([[1, 2]]), None, np.ones((1, 2), np.float32))
    assert "per_sample_weights" in layer.lookup_feed.unsupported
    with pytest.raises(NotImplementedError, match="keep this table dense"):
        _run(layer, "feed", np.array([[1, 2]]), None, np.ones((1, 2), np.float32), activations=[tf.zeros((1, 2))])


def test_a_table_build_leaves_the_served_layers_without_a_weight():
    """Layers built inside TableBuild(served) are listed in construction order; the served ones get no variable
    and no state entry, refuse a normal lookup, and still capture and feed."""
    with E.TableBuild(served={1}) as build:
        kept, served = E.Embedding(6, 2), E.EmbeddingBag(9, 2, mode="sum")
    assert build.layers == [kept, served]
    assert kept.weight is not None and served.weight is None and not served.weights
    assert served.torch_state("bag.") == [] and [e.key for e in kept.torch_state("emb.")] == ["emb.weight"]
    ids = np.array([[1, 2, 3]])
    with pytest.raises(ValueError, match="served by the TPU embedding API"):
        served(ids)
    _, calls = _run(served, "capture", ids)
    np.testing.assert_array_equal(calls[0].numpy(), ids)
    fed, _ = _run(served, "feed", ids, activations=[tf.ones((1, 2))])
    np.testing.assert_array_equal(fed.numpy(), np.ones((1, 2)))
    assert E.Embedding(6, 2).weight is not None  # outside the build: as usual
    # the constructor's own in-place fills of the table (torch's `self.emb.weight[0].zero_()`) leave it alone
    assert fill_slice_in_place(served, "weight", np.s_[0], 0.0) is None
    assert assign_in_place(served, "weight", 0.0) is None


def test_functional_lookups_keep_their_feed_on_the_parameter():
    """F.embedding / F.embedding_bag: the feed made at the first lookup is the variable's; each distinct call's
    arguments are noted; capture and feed work as for the layers (padding positions pass no gradient)."""
    weight = keras.Variable(RNG.standard_normal((8, 3)).astype(np.float32))
    ids = np.array([[0, 5, 0]])
    dense = E.embedding(ids, weight, padding_idx=0)
    feed = weight.lookup_feed
    E.embedding(ids, weight, padding_idx=0)
    assert feed.lookups == [("embedding", (("max_norm", None), ("padding_idx", 0), ("scale_grad_by_freq", False),
                                           ("sparse", False)))]
    feed.mode, feed.calls = "capture", []
    E.embedding(ids, weight, padding_idx=0)
    np.testing.assert_array_equal(feed.calls[0].numpy(), ids)
    activations = tf.constant(dense)
    feed.mode, feed.activations = "feed", [activations]
    with tf.GradientTape() as tape:
        tape.watch(activations)
        fed = E.embedding(ids, weight, padding_idx=0)
        total = tf.reduce_sum(fed)
    feed.mode = None
    np.testing.assert_array_equal(fed.numpy(), dense.numpy())
    np.testing.assert_array_equal(tape.gradient(total, activations).numpy()[0, [0, 2]], 0)
    E.embedding_bag(np.array([1, 2, 3]), weight, np.array([0, 1]), mode="sum")
    assert [kind for kind, _ in feed.lookups] == ["embedding", "embedding_bag"]
    assert E.functional_feed(tf.constant(dense), "embedding") is None  # a computed table is never served


class _Tables(TorchModule):
    """Two nn.Parameter tables (the first filled by torch's init in the constructor) and a Linear."""

    def __init__(self):
        super().__init__()
        self.words = self.parameter(RNG.standard_normal((8, 3)).astype(np.float32))
        init_normal(self.words, std=0.5)
        self.head = self.parameter(np.zeros((3, 2), np.float32))
        self.bags = self.parameter(RNG.standard_normal((9, 3)).astype(np.float32))
        fill_slice_in_place(self, "bags", np.s_[0], 0.0)
        assign_in_place(self, "bags", 1.0)

    def call(self, ids, bags):
        words = tf.reduce_sum(E.embedding(ids, self.words), 1)
        return (words + E.embedding_bag(bags, self.bags, mode="sum")) @ self.head


def test_a_table_build_makes_the_served_parameters_rowless():
    """Parameters made inside TableBuild(served_parameters=...) are listed in construction order; the served ones
    are RowlessTables: no variable, no state entry, init functions and in-place fills leave them alone, a lookup
    outside a feed is refused, and F.embedding / F.embedding_bag still capture and feed through them."""
    with E.TableBuild(served_parameters={0, 2}) as build:
        model = _Tables()
    words, head, bags = build.parameters
    assert isinstance(words, E.RowlessTable) and isinstance(bags, E.RowlessTable) and head is model.head
    assert (words.shape, bags.shape) == ((8, 3), (9, 3))
    assert [e.key for e in model.torch_state("")] == ["head"] and len(model.weights) == 1
    ids, bag_ids = np.array([[1, 2]]), np.array([[3, 4, 5]])
    with pytest.raises(ValueError, match="served by the TPU embedding API"):
        model(ids, bag_ids)
    words.lookup_feed.mode = bags.lookup_feed.mode = "capture"
    try:
        assert model(ids, bag_ids).shape == (1, 2)
    finally:
        words.lookup_feed.mode = bags.lookup_feed.mode = None
    np.testing.assert_array_equal(words.lookup_feed.calls[0].numpy(), ids)
    np.testing.assert_array_equal(bags.lookup_feed.calls[0].numpy(), bag_ids)
    words.lookup_feed.mode, words.lookup_feed.activations = "feed", [tf.ones((1, 2, 3))]
    bags.lookup_feed.mode, bags.lookup_feed.activations = "feed", [tf.ones((1, 3))]
    model.head.assign(np.ones((3, 2), np.float32))
    try:
        np.testing.assert_array_equal(model(ids, bag_ids).numpy(), np.full((1, 2), 9.0))
    finally:
        words.lookup_feed.mode = bags.lookup_feed.mode = None
    with E.TableBuild() as host_build:  # the host copy: every parameter a variable, listed alike
        host = _Tables()
    assert [type(p) for p in host_build.parameters] == [type(host.words)] * 3 and len(host.weights) == 3
    assert not isinstance(_Tables().words, E.RowlessTable)  # outside a build: as usual
    with E.TableBuild(served_parameters={1}) as build:  # a helper's nn.Parameter (new_parameter) alike
        kept, served = new_parameter(np.zeros((4, 2), np.float32)), new_parameter(np.zeros((5, 2), np.float32))
    assert build.parameters == [kept, served] and isinstance(served, E.RowlessTable) and served.shape == (5, 2)
