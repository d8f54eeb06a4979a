"""Large and sparse embedding tables and the TPU embedding API (train_support's tpu-embedding section), up to the
TPU boundary: which tables go to the API and which stay dense Keras tables (and why), the feature config, the
optimizer mapping from torch's, and lookups through TPUEmbeddingForServing (the host-side layer built from the
same config) checked against the real torch layers. Enqueue, dequeue and apply_gradients need a TPU.
"""

import numpy as np
import pytest
import tensorflow as tf
import torch

from porter.training import train_support as support
from tests.rules.op_ports import port
from tests.training.helpers import FIXTURES, convert_source, load_module

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

    def forward(self, ids):
        parts = [self.words(ids).sum(1), self.tags(ids).sum(1), self.small(ids).sum(1), self.bag(ids),
                 self.bag_sum(ids), self.bag_max(ids), self.padded(ids).sum(1)]
        return torch.cat(parts, dim=1)
'''
TPU_TABLES = ["words", "tags", "bag", "bag_sum"]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("tables"), SOURCE, input_specs=("6:int64:0:30",))


def test_sparse_bag_and_large_tables_go_to_the_tpu_embedding_api(pair):
    tables, dense = support.tpu_embedding_tables(pair.keras_model)
    assert [t.name for t in tables] == TPU_TABLES
    assert [t.combiner for t in tables] == [None, None, "mean", "sum"]
    reasons = dict(dense)
    assert set(reasons) == {"bag_max.weight", "padded.weight"}  # `small` is neither sparse nor large: plain Keras
    assert "mode='max'" in reasons["bag_max.weight"] and "padding_idx" in reasons["padded.weight"]


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
    ids = np.random.default_rng(0).integers(0, 30, size=(5, 6)).astype(np.int64)
    features = support.tpu_embedding_features(tables, {t.name: ids for t in tables})
    activations = serving.embedding_lookup(features)
    for name in TPU_TABLES:
        with torch.no_grad():
            expected = getattr(pair.torch_model, name)(torch.from_numpy(ids)).numpy()
        actual = np.asarray(activations[name])
        assert actual.shape == expected.shape, name
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6, err_msg=name)


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


@pytest.fixture(scope="module")
def recommender(tmp_path_factory):
    out = tmp_path_factory.mktemp("recommender") / "out"
    convert_source(FIXTURES / "recommender.py", out)
    return load_module(out / "train_tpu.py")


def test_training_script_of_a_model_with_bags_says_where_its_tables_go(recommender):
    """The generated train_tpu.py carries the section and, on a TPU, prints the plan; off TPU the plan says the
    tables stay dense Keras tables."""
    model = recommender.build_model()
    tables, dense = recommender.support.tpu_embedding_tables(model)
    assert [t.name for t in tables] == ["embeddings.0", "embeddings.1", "embeddings.2"] and not dense
    lines = recommender.tpu_embedding_plan(tf.distribute.get_strategy(), model, recommender.build_optimizer(model))
    assert lines == [("embeddings.0, embeddings.1, embeddings.2: this TPU has no embedding accelerator; dense Keras "
                      "tables")]


def test_models_without_embeddings_carry_no_embedding_code(tmp_path):
    out = tmp_path / "mlp"
    convert_source(FIXTURES / "mlp.py", out)
    assert "tpu_embedding" not in (out / "train_tpu.py").read_text()
    assert "tpu_embedding" not in (out / "train_support.py").read_text()
