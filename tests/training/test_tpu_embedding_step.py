"""The generated train_tpu.py's TPU embedding step on a host: the DLRM fixture's EmbeddingBag tables served by
support.HostTableEmbedding (the CPU stand-in with TPUEmbedding's enqueue / dequeue / apply_gradients protocol)
through the same make_train_function, dataset ids (with_lookup_ids) and embedding_train_step that a TPU runs.
Three Adagrad steps match the dense Keras step and real torch; the plan off and on a TPU; the tables' round trip
through the host checkpoints that seed the TPU's tables and bring them back for export; and under MirroredStrategy
over 2 logical CPUs (--tpu-embedding host, in a process of its own) the model built in the strategy's scope holds no
variable for the served tables (nn.Embedding / EmbeddingBag layers, and nn.Parameters that F.embedding /
F.embedding_bag look up), trains as the dense run does, and exports the trained rows from the host copy.

What only a TPU runs: TPUEmbedding's own enqueue/dequeue ops, its optimizer kernels (the mapping of
tpu_embedding_optimizer), its sums over replicas and its sharding of the tables.
"""

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
import torch

from porter.verify.compare import relative_error
from tests.training.helpers import FIXTURES, convert_source, load_module

STEPS = 3


@pytest.fixture(scope="module")
def recommender(tmp_path_factory):
    out = tmp_path_factory.mktemp("recommender") / "out"
    convert_source(FIXTURES / "recommender.py", out)
    return load_module(out / "train_tpu.py")


@pytest.fixture(scope="module")
def torch_run():
    """The fixture's DLRM, its weights before training, a batch, and the losses and weights after STEPS Adagrad
    steps in torch (as recommender.py trains)."""
    source = load_module(FIXTURES / "recommender.py")
    torch.manual_seed(0)
    model = source.DLRM()
    initial = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    generator = torch.Generator().manual_seed(1)
    dense = torch.randn(16, source.NUM_DENSE, generator=generator)
    sparse = torch.randint(0, 50, (16, 3, source.BAG_SIZE), generator=generator)
    clicks = torch.randint(0, 2, (16,), generator=generator).float()
    optimizer = torch.optim.Adagrad(model.parameters(), lr=0.05)
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = torch.nn.BCELoss()(model(dense, sparse), clicks)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    final = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    return initial, (dense.numpy(), sparse.numpy(), clicks.numpy()), losses, final


def _keras_run(recommender, torch_run, served):
    initial, (dense, sparse, clicks), _, _ = torch_run
    model = recommender.build_model()
    model(dense[:1], sparse[:1], training=False)
    recommender.model_lib.load_state_dict(model, initial)
    optimizer = recommender.build_optimizer(model)
    optimizer.build(model.trainable_variables)
    dataset = tf.data.Dataset.from_tensors(((dense, sparse), clicks)).repeat()
    embedding, tables = None, ()
    if served:
        tables, dense_tables = recommender.support.tpu_embedding_tables(model)
        assert [t.name for t in tables] == ["embeddings.0", "embeddings.1", "embeddings.2"] and not dense_tables
        embedding = recommender.support.HostTableEmbedding(tables, recommender.build_optimizer(model))
        dataset = recommender.with_lookup_ids(dataset, model, tables, on_tpu=False)
    train_steps = recommender.make_train_function(tf.distribute.get_strategy(), model, optimizer,
                                                  recommender.build_loss(), False, embedding, tables)
    losses = train_steps(iter(dataset), tf.constant(STEPS)).numpy()
    state = {e.key: e.variable.numpy() for e in recommender.model_lib.collect_state(model)}
    return losses, state


def test_served_tables_train_as_the_dense_step_and_torch(recommender, torch_run):
    """Errors relative to each tensor's scale: the step with the tables served matches the dense step and torch."""
    _, _, torch_losses, torch_final = torch_run
    served_losses, served = _keras_run(recommender, torch_run, served=True)
    dense_losses, dense = _keras_run(recommender, torch_run, served=False)
    np.testing.assert_allclose(served_losses, torch_losses, rtol=1e-5)
    np.testing.assert_allclose(served_losses, dense_losses, rtol=1e-6)
    for key, expected in torch_final.items():
        assert relative_error(expected, served[key]) <= 1e-5, key
        assert relative_error(dense[key], served[key]) <= 1e-5, key
    assert not np.allclose(served["embeddings.0.weight"], torch_run[0]["embeddings.0.weight"])  # the tables moved


def test_plan_off_tpu_keeps_the_tables_dense(recommender):
    model = recommender.build_model()
    setup, lines = recommender.tpu_embedding_plan(tf.distribute.get_strategy(), model,
                                                  recommender.build_optimizer(model))
    assert setup is None
    assert lines == [("embeddings.0, embeddings.1, embeddings.2: this TPU has no embedding accelerator; dense Keras "
                      "tables")]


@pytest.mark.parametrize("feature, expected", [("V1", "TPUEmbedding"), ("V2", "TPUEmbeddingV2")])
def test_plan_on_a_tpu_with_an_embedding_accelerator(recommender, feature, expected):
    """The strategy's hardware feature picks the API class (a stand-in strategy: no TPU here); Adagrad maps."""
    strategy = _strategy_with(feature)
    host_model = recommender.build_model()
    sample = [tf.zeros((1, *spec["shape"]), spec["dtype"]) for spec in recommender.EXAMPLE_INPUTS]
    setup, lines = recommender.tpu_embedding_plan(strategy, host_model, recommender.build_optimizer(host_model),
                                                  sample)
    host_tables, config, api, mapped = setup
    assert api.__name__ == expected and isinstance(mapped, tf.tpu.experimental.embedding.Adagrad)
    assert [config[t.name].table.combiner for t in host_tables] == ["sum", "sum", "mean"]
    assert [t.layer for t in host_tables] == list(host_model.embeddings)
    assert lines == [f"embeddings.0, embeddings.1, embeddings.2: {expected} with Adagrad"]


def _strategy_with(feature):
    """A stand-in for a TPUStrategy whose TPU reports `feature` (no TPU here)."""
    kinds = tf.tpu.experimental.HardwareFeature.EmbeddingFeature
    return types.SimpleNamespace(extended=types.SimpleNamespace(
        tpu_hardware_feature=types.SimpleNamespace(embedding_feature=getattr(kinds, feature))))


def test_a_source_that_clips_gradients_keeps_its_tables_dense(tmp_path):
    """torch clips the global norm over every parameter, tables included; the API keeps their gradients to itself."""
    source = tmp_path / "recommender.py"
    text = (FIXTURES / "recommender.py").read_text()
    source.write_text(text.replace("        loss.backward()\n", "        loss.backward()\n"
                                   "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"))
    convert_source(source, tmp_path / "out")
    script = load_module(tmp_path / "out" / "train_tpu.py")
    model = script.build_model()
    setup, lines = script.tpu_embedding_plan(_strategy_with("V1"), model, script.build_optimizer(model))
    assert setup is None and "clips the gradients" in lines[-1]


def test_the_input_pipeline_carries_ids_shaped_for_a_tpus_enqueue(recommender, torch_run):
    """with_lookup_ids in tf.data: each bag's ids as a RaggedTensor row per example, next to the batch itself."""
    _, (dense, sparse, clicks), _, _ = torch_run
    model = recommender.build_model()
    tables, _ = recommender.support.tpu_embedding_tables(model)
    dataset = tf.data.Dataset.from_tensors(((dense, sparse), clicks))
    (_, _, ids), = recommender.with_lookup_ids(dataset, model, tables).take(1)
    assert sorted(ids) == ["embeddings.0", "embeddings.1", "embeddings.2"]
    for i in range(3):
        feature = ids[f"embeddings.{i}"]
        assert isinstance(feature, tf.RaggedTensor)
        np.testing.assert_array_equal(feature.to_tensor().numpy(), sparse[:, i])


def test_tables_round_trip_through_the_host_checkpoints(recommender, tmp_path):
    """initial_tables writes the model's rows for the TPU object to restore; tables_into_model brings trained rows
    back into the model's layers for export (here from the same checkpoint, after the layers were overwritten)."""
    model = recommender.build_model()
    tables, _ = recommender.support.tpu_embedding_tables(model)
    config = recommender.support.tpu_feature_config(tables)
    mapped, _ = recommender.support.tpu_embedding_optimizer(recommender.build_optimizer(model))
    before = [t.layer.weight.numpy().copy() for t in tables]
    path = recommender.initial_tables(tables, config, mapped, str(tmp_path / "checkpoints"))
    for table in tables:
        table.layer.weight.assign(tf.zeros_like(table.layer.weight))
    recommender.tables_into_model(tables, config, mapped, path)
    for table, rows in zip(tables, before):
        np.testing.assert_array_equal(table.layer.weight.numpy(), rows, err_msg=table.name)


def _replicated(root, port):
    """`port` trained 3 steps by train_tpu.main under MirroredStrategy over 2 logical CPUs, its tables served by
    HostTableEmbedding (`host`) and dense (`off`), each in a process of its own (the logical CPUs must be set up
    before TensorFlow starts); see tpu_embedding_driver.py."""
    runs = {}
    for mode in ("host", "off"):
        done = subprocess.run([sys.executable, str(Path(__file__).with_name("tpu_embedding_driver.py")),
                               str(port), str(root), mode], capture_output=True, text=True, timeout=300, check=False,
                              env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
        assert done.returncode == 0, done.stderr[-3000:]
        runs[mode] = json.loads((root / f"{mode}.json").read_text())
    return runs


@pytest.fixture(scope="module")
def replicated_runs(tmp_path_factory):
    """The DLRM port's replicated runs (_replicated)."""
    root = tmp_path_factory.mktemp("replicated")
    convert_source(FIXTURES / "recommender.py", root / "port")
    return _replicated(root, root / "port")


FUNCTIONAL_SOURCE = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class FunctionalTables(nn.Module):
    def __init__(self):
        super().__init__()
        self.items = nn.Parameter(torch.randn(40, 8))
        self.fc = nn.Linear(16, 3)
        self.users = nn.Parameter(torch.empty(60, 8))
        nn.init.normal_(self.users, std=0.5)

    def forward(self, ids, bags):
        a = F.embedding(ids, self.items, sparse=True).sum(1)
        b = F.embedding_bag(bags, self.users, mode="mean")
        return self.fc(torch.cat([a, b], dim=1))
"""


@pytest.fixture(scope="module")
def functional_runs(tmp_path_factory):
    """The replicated runs (_replicated) of a model whose tables are nn.Parameters looked up by F.embedding and
    F.embedding_bag."""
    root = tmp_path_factory.mktemp("functional")
    (root / "functional.py").write_text(FUNCTIONAL_SOURCE)
    convert_source(root / "functional.py", root / "port", "--input-shape", "5:int64:0:40", "--input-shape",
                   "7:int64:0:60")
    return _replicated(root, root / "port")


def test_served_tables_have_no_variable_in_the_replicated_model(replicated_runs):
    """The model built in the strategy's scope (TableBuild) holds the dense part only: 3 variables and 22,400 bytes
    (the three tables, 350 x 16 float32 rows) fewer than the dense model, the rows living in the host copy."""
    host = replicated_runs["host"]
    assert host["lines"] == ["embeddings.0, embeddings.1, embeddings.2: HostTableEmbedding with Adagrad"]
    assert host["rowless"] == [True, True, True]
    (served_count, served_bytes), (dense_count, dense_bytes) = host["served"], host["dense"]
    assert dense_count - served_count == 3
    assert dense_bytes - served_bytes == (100 + 200 + 50) * 16 * 4


def test_replicated_served_run_trains_and_exports_as_the_dense_run(replicated_runs):
    """Same losses as the dense run over 2 replicas; the exported .keras carries the trained rows (the tables moved
    from their start, and equal the dense run's within the replicas' summation order)."""
    served, dense = replicated_runs["host"], replicated_runs["off"]
    for key in ("first_loss_window_mean", "final_loss"):
        np.testing.assert_allclose(served["metrics"][key], dense["metrics"][key], rtol=1e-6)
    for key, expected in dense["state"].items():
        assert relative_error(np.array(expected), np.array(served["state"][key])) <= 1e-5, key


def test_served_functional_tables_have_no_variable_and_train_as_the_dense_run(functional_runs):
    """F.embedding / F.embedding_bag parameters served over 2 replicas: the model built in the strategy's scope
    holds the Linear only (2 variables and 3,200 bytes (40 + 60 rows of 8 float32) fewer than the dense model), the
    losses equal the dense run's, and the exported .keras carries the trained rows from the host copy."""
    served, dense = functional_runs["host"], functional_runs["off"]
    assert served["lines"] == ["items, users: HostTableEmbedding with Adam"]
    assert served["rowless"] == [True, True]
    (served_count, served_bytes), (dense_count, dense_bytes) = served["served"], served["dense"]
    assert (dense_count - served_count, dense_bytes - served_bytes) == (2, (40 + 60) * 8 * 4)
    for key in ("first_loss_window_mean", "final_loss"):
        np.testing.assert_allclose(served["metrics"][key], dense["metrics"][key], rtol=1e-6)
    assert set(served["state"]) == {"items", "users", "fc.weight", "fc.bias"}
    for key, expected in dense["state"].items():
        assert relative_error(np.array(expected), np.array(served["state"][key])) <= 1e-5, key
