"""Large and sparse embedding tables and the TPU embedding API (train_support's tpu-embedding section), up to the
TPU boundary: which tables go to the API and which stay dense Keras tables (and why), the feature config, the
optimizer mapping from torch's, lookups through TPUEmbeddingForServing (the host-side layer built from the same
config) checked against the real torch layers, and the substitution the training step makes: the model fed the
API's activations gives the dense model's outputs, and the activations' gradients, carried back through the
serving layer's lookup, are the dense tables' gradients. Enqueue, dequeue and apply_gradients need a TPU.
"""

import numpy as np
import pytest
import tensorflow as tf
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from porter.training import train_support as support
from porter.verify.compare import relative_error
from tests.rules.op_ports import port
from tests.training.helpers import FIXTURES, convert_source

SOURCE = '''
import torch
import torch.nn as nn


class Tables(nn.Module):
    def __init__(self):
        super().__init__()
        self.words = nn.Embedding(20001, 4)
        self.tags = nn.Embedding(50, 8, sparse=True)
        self.small = nn.Embedding(100, 8)
        self.bag = nn.EmbeddingBag(300, 8, mode="mean")
        self.bag_sum = nn.EmbeddingBag(300, 8, mode="sum")
        self.bag_max = nn.EmbeddingBag(30, 8, mode="max")
        self.padded = nn.Embedding(20001, 4, padding_idx=0)
        self.bag_padded = nn.EmbeddingBag(300, 8, mode="mean", padding_idx=2)

    def forward(self, ids):
        parts = [self.words(ids).sum(1), self.tags(ids).sum(1), self.small(ids).sum(1), self.bag(ids),
                 self.bag_sum(ids), self.bag_max(ids), self.padded(ids).sum(1), self.bag_padded(ids)]
        return torch.cat(parts, dim=1)
'''
TPU_TABLES = ["words", "tags", "bag", "bag_sum", "padded", "bag_padded"]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("tables"), SOURCE, input_specs=("6:int64:0:30",))


def test_sparse_bag_and_large_tables_go_to_the_tpu_embedding_api(pair):
    tables, dense = support.tpu_embedding_tables(pair.keras_model)
    assert [t.name for t in tables] == TPU_TABLES
    assert [t.combiner for t in tables] == [None, None, "mean", "sum", None, "mean"]
    reasons = dict(dense)
    assert set(reasons) == {"bag_max.weight"}  # `small` is neither sparse nor large: plain Keras
    assert "mode='max'" in reasons["bag_max.weight"]


def test_serving_lookups_match_torch(pair):
    """TPUEmbeddingForServing, built from the feature config and loaded with the model's rows, gives what the torch
    layers give on the same ids."""
    tables, _ = support.tpu_embedding_tables(pair.keras_model)
    config = support.tpu_feature_config(tables)
    optimizer, why_not = support.tpu_embedding_optimizer(support.Adam(learning_rate=1e-3))
    assert why_not is None
    serving = tf.tpu.experimental.embedding.TPUEmbeddingForServing(config, optimizer)
    serving.build()
    support.load_table_weights(serving, tables, config)
    ids = _ids()
    features = support.tpu_embedding_features(tables, {t.name: ids for t in tables})
    activations = serving.embedding_lookup(features)
    for name in TPU_TABLES:
        with torch.no_grad():
            expected = getattr(pair.torch_model, name)(torch.from_numpy(ids)).numpy()
        actual = np.asarray(activations[name])
        assert actual.shape == expected.shape, name
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6, err_msg=name)
        # what HostTableEmbedding's dequeue gives, from the model's own rows
        table = next(t for t in tables if t.name == name)
        host = support.host_lookup(table, table.layer.weight, features[name]).numpy()
        np.testing.assert_allclose(host, actual, rtol=1e-6, atol=1e-6, err_msg=name)


def _ids():
    ids = np.random.default_rng(0).integers(0, 30, size=(5, 6)).astype(np.int64)
    ids[:, 0], ids[1] = 0, 2  # padding of `padded` in every row; a bag of `bag_padded` with nothing but padding
    return ids


def _serving(tables):
    config = support.tpu_feature_config(tables)
    serving = tf.tpu.experimental.embedding.TPUEmbeddingForServing(config, tf.tpu.experimental.embedding.SGD(0.1))
    serving.build()
    support.load_table_weights(serving, tables, config)
    return serving, config


def test_model_fed_the_apis_activations_matches_the_dense_model_and_its_gradients(pair):
    """The step's substitution up to the TPU boundary: ids captured from the model's own lookups, looked up by
    TPUEmbeddingForServing, fed back in place of the tables. Same outputs as the dense model (and torch); the loss'
    gradient w.r.t. the activations, carried back through the serving lookup (the API's backward: a scatter-add
    through the combiner, padding left out), equals each dense table's gradient."""
    tables, _ = support.tpu_embedding_tables(pair.keras_model)
    ids = _ids()
    captured = support.lookup_ids(pair.keras_model, tables, (ids,))
    assert sorted(captured) == sorted(TPU_TABLES)
    for name in TPU_TABLES:
        np.testing.assert_array_equal(np.asarray(captured[name]), ids, err_msg=name)
    errors = assert_fed_matches_dense(pair, tables, ids)
    assert max(errors.values()) <= 1e-6, errors


def assert_fed_matches_dense(pair, tables, ids):
    """Outputs and table gradients of the fed model (serving lookups) against the dense model and torch; returns
    the largest error relative to each tensor's scale, by what was compared."""
    model = pair.keras_model
    serving, config = _serving(tables)
    features = support.tpu_embedding_features(tables, support.lookup_ids(model, tables, (ids,)))
    with torch.no_grad():
        expected = pair.torch_model(torch.from_numpy(ids)).numpy()
    upstream = tf.constant(np.random.default_rng(1).standard_normal(expected.shape), tf.float32)
    with tf.GradientTape() as tape:
        activations = serving.embedding_lookup(features)
        with support.FedLookups(tables, activations):
            fed = model(ids)
        loss = tf.reduce_sum(fed * upstream)
    fed_gradients = tape.gradient(loss, [serving.embedding_tables[config[t.name].table] for t in tables])
    with tf.GradientTape() as tape:
        dense = model(ids)
        loss = tf.reduce_sum(dense * upstream)
    dense_gradients = tape.gradient(loss, [t.layer.weight for t in tables])
    errors = {"outputs vs dense": relative_error(dense.numpy(), fed.numpy()),
              "outputs vs torch": relative_error(expected, fed.numpy())}
    for table, from_api, from_dense in zip(tables, fed_gradients, dense_gradients):
        from_dense = tf.convert_to_tensor(from_dense).numpy()
        errors[f"{table.name} gradient"] = relative_error(from_dense, tf.convert_to_tensor(from_api).numpy())
        if table.layer.padding_idx is not None:
            assert not np.any(from_dense[table.layer.padding_idx]), table.name
    return errors


SHARED = '''
import torch
import torch.nn as nn


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.items = nn.Embedding(20001, 4, padding_idx=0)

    def forward(self, ids):
        history, candidate = self.items(ids[:, :3]).mean(1), self.items(ids[:, 3])
        return (history * candidate).sum(1, keepdim=True)
'''


def test_a_table_looked_up_twice_gets_two_features_of_one_table(tmp_path):
    """Two lookups of one table per forward (a shared item table): two features sharing its TableConfig, fed in
    call order; their gradients add up in the table, as the dense table's do."""
    pair = port(tmp_path, SHARED, input_specs=("4:int64:0:20001",))
    tables, _ = support.tpu_embedding_tables(pair.keras_model)
    ids = np.array([[5, 0, 7, 5], [1, 2, 3, 0], [9, 9, 9, 9]], np.int64)
    assert support.count_lookups(pair.keras_model, tables, (ids,)) == []  # nothing kept dense
    assert tables[0].features == ["items", "items/1"]
    config = support.tpu_feature_config(tables)
    assert config["items"].table is config["items/1"].table
    errors = assert_fed_matches_dense(pair, tables, ids)
    assert max(errors.values()) <= 1e-6, errors


def test_on_a_tpu_an_embeddings_ids_get_the_axis_the_api_reduces(pair):
    tables, _ = support.tpu_embedding_tables(pair.keras_model)
    features = support.tpu_embedding_features(tables, {t.name: _ids() for t in tables}, on_tpu=True)
    assert features["words"].shape == (5, 6, 1)  # one row per id: the TPU returns (5, 6, dim)
    assert isinstance(features["bag"], tf.RaggedTensor) and features["bag"].shape[0] == 5
    assert features["bag_padded"].row_lengths().numpy()[1] == 0  # padding ids leave the bag


READ_BY_HAND = '''
import torch
import torch.nn as nn


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20001, 8)
        self.other = nn.Embedding(20001, 8)

    def forward(self, ids):
        return (self.emb(ids) + self.other(ids)) @ self.emb.weight.t()
'''


def test_a_table_the_model_also_reads_by_hand_stays_dense(tmp_path):
    """A trial forward with the lookups fed finds the weight that still gets a gradient (an output layer built
    from the table by hand); the training script keeps it dense (tpu_embedding_plan)."""
    model = port(tmp_path, READ_BY_HAND, input_specs=("3:int64:0:20001",)).keras_model
    tables, _ = support.tpu_embedding_tables(model)
    assert [t.name for t in tables] == ["emb", "other"]
    assert support.tables_read_elsewhere(model, tables, (np.array([[1, 5, 7]]),)) == ["emb"]


WEIGHTED = '''
import torch
import torch.nn as nn


class Weighted(nn.Module):
    def __init__(self):
        super().__init__()
        self.weighted = nn.EmbeddingBag(300, 8, mode="sum")
        self.unused = nn.EmbeddingBag(300, 8, mode="sum")
        self.plain = nn.EmbeddingBag(300, 8, mode="sum")

    def forward(self, ids):
        return self.weighted(ids, per_sample_weights=torch.ones(ids.shape)) + self.plain(ids)
'''


def test_tables_not_looked_up_or_with_per_sample_weights_stay_dense(tmp_path):
    model = port(tmp_path, WEIGHTED, input_specs=("3:int64:0:300",)).keras_model
    tables, _ = support.tpu_embedding_tables(model)
    kept = dict(support.count_lookups(model, tables, (np.array([[1, 5, 7]]),)))
    assert set(kept) == {"weighted", "unused"}
    assert "per_sample_weights" in kept["weighted"] and "not looked up" in kept["unused"]


def test_a_table_read_outside_its_lookups_is_refused(pair):
    tables, _ = support.tpu_embedding_tables(pair.keras_model)
    words = next(t for t in tables if t.name == "words")
    lookups = support.FedLookups([words], {"words": tf.zeros((1, 6, 4))})
    with pytest.raises(ValueError, match="outside its lookups"):
        lookups.check_unread([words.layer.weight], [tf.ones((20001, 4))])


def test_feature_config_has_each_tables_size_and_torchs_combiner(pair):
    tables, _ = support.tpu_embedding_tables(pair.keras_model)
    config = support.tpu_feature_config(tables)
    assert list(config) == TPU_TABLES
    for table in tables:
        table_config = config[table.name].table
        assert (table_config.vocabulary_size, table_config.dim) == (table.layer.num_embeddings,
                                                                     table.layer.embedding_dim)
        assert table_config.combiner == (table.combiner or "sum")  # one id per row: the combiner does nothing
        assert config[table.name].name == table_config.name == table.name.replace(".", "_")


def test_torch_optimizers_map_to_tpu_embedding_optimizers():
    embedding = tf.tpu.experimental.embedding
    sgd, _ = support.tpu_embedding_optimizer(support.SGD(learning_rate=0.1, weight_decay=1e-4))
    assert isinstance(sgd, embedding.SGD)
    assert sgd.weight_decay_factor == 1e-4 and sgd.multiply_weight_decay_factor_by_learning_rate
    adamw = support.AdamW(learning_rate=1e-3, beta_1=0.8, beta_2=0.95, weight_decay=0.1)
    adam, _ = support.tpu_embedding_optimizer(adamw)
    assert isinstance(adam, embedding.Adam)
    assert (adam.beta_1, adam.beta_2, adam.epsilon) == (0.8, 0.95, 1e-8)
    assert not adam.lazy_adam and not adam.sum_inside_sqrt  # torch: every row's moments decay, eps outside sqrt
    assert adam.weight_decay_factor == 0.1 and adam.multiply_weight_decay_factor_by_learning_rate
    assert float(adam.learning_rate()) == pytest.approx(1e-3)  # follows the Keras optimizer (its schedule)
    adagrad, _ = support.tpu_embedding_optimizer(support.Adagrad(learning_rate=0.01, initial_accumulator_value=0.5))
    assert isinstance(adagrad, embedding.Adagrad) and adagrad.initial_accumulator_value == 0.5


@pytest.mark.parametrize("optimizer, reason", [
    (lambda: support.SGD(learning_rate=0.1, momentum=0.9), "momentum"),
    (lambda: support.Adam(learning_rate=1e-3, weight_decay=1e-4), "coupled L2"),
    (lambda: support.RMSprop(learning_rate=1e-3), "RMSprop"),
])
def test_rules_the_tpu_api_cannot_follow_keep_tables_dense(optimizer, reason):
    mapped, why_not = support.tpu_embedding_optimizer(optimizer())
    assert mapped is None and reason in why_not


def test_off_tpu_there_is_no_tpu_embedding_class():
    assert support.tpu_embedding_class(tf.distribute.get_strategy()) is None


def test_torch_adagrad_default_accumulator_becomes_positive():
    adagrad, _ = support.tpu_embedding_optimizer(support.Adagrad(learning_rate=0.01))
    assert adagrad.initial_accumulator_value == pytest.approx(1e-20)


def test_models_without_embeddings_carry_no_embedding_code(tmp_path):
    out = tmp_path / "mlp"
    convert_source(FIXTURES / "mlp.py", out)
    assert "tpu_embedding" not in (out / "train_tpu.py").read_text()
    assert "tpu_embedding" not in (out / "train_support.py").read_text()


FUNCTIONAL_SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Functional(nn.Module):
    def __init__(self):
        super().__init__()
        self.words = nn.Parameter(torch.randn(30, 4))
        self.bags = nn.Parameter(torch.randn(30, 4))
        self.padded = nn.Parameter(torch.randn(30, 4))
        self.scaled = nn.Parameter(torch.randn(30, 4))
        self.small = nn.Parameter(torch.randn(30, 4))
        self.capped = nn.Parameter(torch.randn(30, 4))

    def forward(self, ids, flat, offsets):
        a = F.embedding(ids, self.words, padding_idx=0, sparse=True).sum(1)
        b = F.embedding_bag(flat, self.bags, offsets, mode="sum")
        c = F.embedding_bag(flat, self.padded, offsets, mode="mean", padding_idx=1)
        d = F.embedding_bag(flat, self.scaled, offsets, mode="sum", scale_grad_by_freq=True)
        e = F.embedding(ids, self.small).sum(1)
        f = F.embedding_bag(flat, self.capped, offsets, mode="mean", max_norm=1.0)
        return torch.cat([a, b, c, d, e, f], dim=1)
'''
FUNCTIONAL_TABLES = ["words", "bags", "padded"]


@pytest.fixture(scope="module")
def functional_pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("functional"), FUNCTIONAL_SOURCE,
                input_specs=("5:int64:0:30", "7:int64:0:30", "3:int64:0:7"))


def _functional_inputs(data, batch, length):
    ids = np.array(data.draw(st.lists(st.lists(st.integers(0, 29), min_size=length, max_size=length),
                                      min_size=batch, max_size=batch)), np.int64)
    size = data.draw(st.integers(0, 8))
    flat = np.array(data.draw(st.lists(st.integers(0, 29), min_size=size, max_size=size)), np.int64).reshape(size)
    offsets = np.sort(np.array(data.draw(st.lists(st.integers(0, size), min_size=batch, max_size=batch)), np.int64))
    offsets[0] = 0  # repeated offsets and offsets at the end: empty bags
    return ids, flat, offsets


def test_functional_lookups_are_served_with_the_layers_reasons(functional_pair):
    model = functional_pair.keras_model
    model(*_fixed_functional_inputs(), training=False)  # functional tables are found when they run
    tables, dense = support.tpu_embedding_tables(model)
    assert [t.name for t in tables] == FUNCTIONAL_TABLES  # `small`: neither sparse, a bag, nor large
    assert [t.combiner for t in tables] == [None, "sum", "mean"]
    assert [t.layer.padding_idx for t in tables] == [0, None, 1]
    assert dict(dense) == {"scaled": "scale_grad_by_freq has no TPU embedding counterpart",
                           "capped": "max_norm: torch renormalises the looked-up rows in place, which the TPU "
                                     "embedding API cannot"}


def _fixed_functional_inputs():
    return np.array([[0, 3, 5], [7, 0, 29]], np.int64), np.array([1, 4, 1, 9, 2], np.int64), np.array([0, 2], np.int64)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.integers(1, 3), length=st.integers(1, 4), data=st.data())
def test_functional_lookups_match_torch_dense_and_through_the_host_stand_in(functional_pair, batch, length, data):
    """F.embedding / F.embedding_bag on hypothesis-drawn ids (batch 1, empty bags given by offsets): the dense
    port's outputs, and the served path's (ids captured from the model's calls, looked up by HostTableEmbedding,
    fed back), equal torch's; one torch-rule SGD(lr=1) step of the stand-in moves each served table by torch's
    gradient."""
    inputs = _functional_inputs(data, batch, length)
    model, torch_model = functional_pair.keras_model, functional_pair.torch_model
    torch_model.zero_grad()
    expected = torch_model(*(torch.from_numpy(x) for x in inputs))
    upstream = np.random.default_rng(batch * 10 + length).standard_normal(tuple(expected.shape)).astype(np.float32)
    (expected * torch.from_numpy(upstream)).sum().backward()
    expected = expected.detach().numpy()
    assert relative_error(expected, model(*inputs, training=False).numpy()) <= 1e-6
    tables, _ = support.tpu_embedding_tables(model)
    before = {t.name: t.layer.weight.numpy().copy() for t in tables}
    embedding = support.HostTableEmbedding(tables, support.SGD(learning_rate=1.0))
    embedding.enqueue(support.tpu_embedding_features(tables, support.lookup_ids(model, tables, inputs)))
    lookups = support.FedLookups(tables, embedding.dequeue())
    with tf.GradientTape() as tape:
        tape.watch(lookups.activations)
        with lookups:
            outputs = model(*inputs, training=False)
        loss = tf.reduce_sum(outputs * upstream)
    assert relative_error(expected, outputs.numpy()) <= 1e-6
    embedding.apply_gradients(tape.gradient(loss, lookups.activations))
    try:
        for table in tables:
            moved = before[table.name] - table.layer.weight.numpy()
            wanted = getattr(torch_model, table.name).grad
            wanted = (wanted.to_dense() if wanted.is_sparse else wanted).numpy()
            assert relative_error(wanted, moved) <= 1e-5 or not np.any(wanted), table.name
    finally:
        for table in tables:
            table.layer.weight.assign(before[table.name])
