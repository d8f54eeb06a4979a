"""`porter data`: tensors (.pt TensorDataset / tuple / dict, .npz, .npy) -> TFRecord shards + schema.json that the
generated train_tpu.py reads back with --data."""

import json

import numpy as np
import pytest

from porter.cli import main as porter


def read_back(train, directory, global_batch, count):
    """The first `count` examples make_dataset yields from DIR (one pipeline, no shuffle)."""
    dataset = train.tfrecord_dataset(str(directory), shuffle=False).take(count)
    inputs, targets = [], []
    for x, y in dataset:
        inputs.append([v.numpy() for v in x])
        targets.append(y.numpy())
    return inputs, np.stack(targets)


def test_tensor_dataset_round_trip(tiny_models, tmp_path, capsys):
    import torch
    from torch.utils.data import TensorDataset

    x = torch.randn(50, 2, 4, 4)
    y = torch.randint(0, 4, (50,))
    torch.save(TensorDataset(x, y), tmp_path / "train.pt")
    out = tmp_path / "records"
    manifest = tiny_models["logits"].out / "porter-manifest.json"
    assert porter(["data", str(tmp_path / "train.pt"), "-o", str(out), "--shards", "3", "--manifest",
                   str(manifest)]) == 0
    schema = json.loads((out / "schema.json").read_text())
    assert schema["num_examples"] == 50 and len(schema["files"]) == 3
    assert schema["inputs"] == [{"name": "input0", "shape": [2, 4, 4], "dtype": "float32"}]
    assert schema["target"] == {"name": "target", "shape": [], "dtype": "int64"}
    train, _ = tiny_models["logits"].training_script(tmp_path / "script", "optimizer = torch.optim.SGD("
                                                     "model.parameters(), lr=0.1)", "F.cross_entropy(out, y)")
    inputs, targets = read_back(train, out, 10, 50)
    np.testing.assert_array_equal(np.stack([i[0] for i in inputs]), x.numpy())
    np.testing.assert_array_equal(targets, y.numpy())
    assert train.steps_per_epoch_for(10, str(out)) == 5
    batch = next(iter(train.make_dataset(10, data=str(out))))
    assert batch[0][0].shape == (10, 2, 4, 4) and batch[1].shape == (10,)


def test_npz_with_named_target_and_npy_pairs(tmp_path):
    features = np.random.default_rng(0).standard_normal((12, 3)).astype(np.float64)
    labels = np.arange(12)
    ids = np.arange(24).reshape(12, 2).astype(np.int32)
    np.savez(tmp_path / "d.npz", labels=labels, dense=features, ids=ids)
    assert porter(["data", str(tmp_path / "d.npz"), "-o", str(tmp_path / "a")]) == 0
    schema = json.loads((tmp_path / "a" / "schema.json").read_text())
    assert [f["name"] for f in schema["inputs"]] == ["dense", "ids"] and schema["target"]["name"] == "labels"
    assert schema["inputs"][0]["dtype"] == "float32" and schema["inputs"][1]["dtype"] == "int32"
    np.save(tmp_path / "x.npy", features)
    np.save(tmp_path / "y.npy", labels)
    assert porter(["data", str(tmp_path / "x.npy"), str(tmp_path / "y.npy"), "-o", str(tmp_path / "b"),
                   "--target", "y"]) == 0
    assert json.loads((tmp_path / "b" / "schema.json").read_text())["target"]["name"] == "y"


@pytest.mark.parametrize("problem", ["lengths", "pickle", "manifest", "not_empty", "one_array"])
def test_bad_inputs_exit_2(tiny_models, tmp_path, capsys, problem):
    import torch

    out = tmp_path / "out"
    args = []
    if problem == "lengths":
        np.save(tmp_path / "x.npy", np.zeros((5, 2)))
        np.save(tmp_path / "y.npy", np.zeros((4,)))
        args = [str(tmp_path / "x.npy"), str(tmp_path / "y.npy")]
    elif problem == "pickle":
        torch.save(torch.nn.Linear(2, 2), tmp_path / "m.pt")  # a module, not tensors: refused by weights_only
        args = [str(tmp_path / "m.pt")]
    elif problem == "manifest":
        torch.save((torch.zeros(4, 3, 4, 4), torch.zeros(4)), tmp_path / "t.pt")
        args = [str(tmp_path / "t.pt"), "--manifest", str(tiny_models["logits"].out / "porter-manifest.json")]
    elif problem == "not_empty":
        out.mkdir()
        (out / "keep.txt").write_text("x")
        torch.save((torch.zeros(4, 2), torch.zeros(4)), tmp_path / "t.pt")
        args = [str(tmp_path / "t.pt")]
    else:
        np.save(tmp_path / "x.npy", np.zeros((5, 2)))
        args = [str(tmp_path / "x.npy")]
    assert porter(["data", *args, "-o", str(out)]) == 2
    assert "porter: error:" in capsys.readouterr().err
