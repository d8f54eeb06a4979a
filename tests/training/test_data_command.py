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


def records(directory, schema):
    """Every example of DIR's TFRecord files in file order: {feature name: array of rows}, read with tf.data."""
    import tensorflow as tf

    fields = schema["inputs"] + [schema["target"]]
    spec = {f["name"]: tf.io.FixedLenFeature(f["shape"], tf.float32 if f["dtype"] == "float32" else tf.int64)
            for f in fields}
    rows = {f["name"]: [] for f in fields}
    for name in schema["files"]:
        for record in tf.data.TFRecordDataset(str(directory / name)):
            example = tf.io.parse_single_example(record, spec)
            for key, values in rows.items():
                values.append(example[key].numpy())
    return {key: np.stack(values) for key, values in rows.items()}


def test_hosts_write_eight_files_per_host_and_each_host_reads_its_own(tiny_models, tmp_path, capsys):
    import tensorflow as tf

    x = np.random.default_rng(1).standard_normal((100, 2, 4, 4)).astype(np.float32)
    y = np.arange(100)  # unique targets name each example
    np.savez(tmp_path / "d.npz", x=x, y=y)
    out = tmp_path / "pod"
    assert porter(["data", str(tmp_path / "d.npz"), "-o", str(out), "--hosts", "4"]) == 0
    assert "warning" not in capsys.readouterr().err
    schema = json.loads((out / "schema.json").read_text())
    assert len(schema["files"]) == 32 and schema["hosts"] == 4  # 8 per host, though 100 examples fit in one file
    assert sorted(p.name for p in out.glob("*.tfrecord")) == schema["files"]
    written = records(out, schema)
    np.testing.assert_array_equal(written["x"], x)
    np.testing.assert_array_equal(written["y"], y)
    train, _ = tiny_models["logits"].training_script(tmp_path / "script", "optimizer = torch.optim.SGD("
                                                     "model.parameters(), lr=0.1)", "F.cross_entropy(out, y)")
    files_rows = [sum(1 for _ in tf.data.TFRecordDataset(str(out / name))) for name in schema["files"]]
    seen = []
    for host in range(4):
        context = tf.distribute.InputContext(num_input_pipelines=4, input_pipeline_id=host, num_replicas_in_sync=8)
        one_pass = sum(files_rows[host::4])  # train_tpu.py gives host i the files i, i+4, ...
        for inputs, label in train.tfrecord_dataset(str(out), input_context=context, shuffle=False).take(one_pass):
            np.testing.assert_array_equal(inputs[0].numpy(), x[int(label)])
            seen.append(int(label))
    assert sorted(seen) == list(range(100))  # the hosts' shares are disjoint and hold every example


def test_hosts_without_files_are_warned_about_in_one_line(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.arange(40, dtype=np.float32).reshape(20, 2))
    np.save(tmp_path / "y.npy", np.arange(20))
    sources = [str(tmp_path / "x.npy"), str(tmp_path / "y.npy")]
    assert porter(["data", *sources, "-o", str(tmp_path / "few"), "--hosts", "4", "--shards", "2"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "2 TFRecord file(s) for 4 hosts" in warnings[0] and "--shards 32" in warnings[0]
    assert len(json.loads((tmp_path / "few" / "schema.json").read_text())["files"]) == 2
    # fewer examples than 8 files per host: one example per file, every host still has files, no warning
    assert porter(["data", *sources, "-o", str(tmp_path / "small"), "--hosts", "4"]) == 0
    assert "warning" not in capsys.readouterr().err
    schema = json.loads((tmp_path / "small" / "schema.json").read_text())
    assert len(schema["files"]) == 20
    np.testing.assert_array_equal(records(tmp_path / "small", schema)["x"], np.arange(40).reshape(20, 2))
    # without --hosts the count follows --shard-mb as before: one file for this small set
    assert porter(["data", *sources, "-o", str(tmp_path / "one")]) == 0
    assert len(json.loads((tmp_path / "one" / "schema.json").read_text())["files"]) == 1


def test_channels_last_io_writes_images_nhwc(tiny_models, tmp_path):
    import torch
    from torch.utils.data import TensorDataset

    images = torch.randn(12, 3, 5, 6)  # distinct sizes on every axis: a wrong permutation cannot pass
    labels = torch.randint(0, 4, (12,))
    features = torch.randn(12, 7)
    torch.save({"image": images, "features": features, "label": labels}, tmp_path / "d.pt")
    out = tmp_path / "nhwc"
    assert porter(["data", str(tmp_path / "d.pt"), "-o", str(out), "--channels-last-io"]) == 0
    schema = json.loads((out / "schema.json").read_text())
    assert schema["channels_last_io"] is True
    assert schema["inputs"] == [{"name": "image", "shape": [5, 6, 3], "dtype": "float32", "layout": "channels_last"},
                                {"name": "features", "shape": [7], "dtype": "float32"}]
    assert schema["target"] == {"name": "label", "shape": [], "dtype": "int64"}
    written = records(out, schema)
    np.testing.assert_array_equal(written["image"], images.numpy().transpose(0, 2, 3, 1))
    np.testing.assert_array_equal(written["features"], features.numpy())
    np.testing.assert_array_equal(written["label"], labels.numpy())
    # an image target (super-resolution) follows the model's output layout; the reader sees the NHWC shapes
    torch.save(TensorDataset(images, images * 2), tmp_path / "sr.pt")
    out = tmp_path / "sr"
    assert porter(["data", str(tmp_path / "sr.pt"), "-o", str(out), "--channels-last-io"]) == 0
    schema = json.loads((out / "schema.json").read_text())
    assert schema["target"]["shape"] == [5, 6, 3] and schema["target"]["layout"] == "channels_last"
    train, _ = tiny_models["logits"].training_script(tmp_path / "script", "optimizer = torch.optim.SGD("
                                                     "model.parameters(), lr=0.1)", "F.cross_entropy(out, y)")
    inputs, targets = read_back(train, out, 4, 12)
    np.testing.assert_array_equal(np.stack([i[0] for i in inputs]), images.numpy().transpose(0, 2, 3, 1))
    np.testing.assert_array_equal(targets, images.numpy().transpose(0, 2, 3, 1) * 2)
    # without the flag, the same file is written as torch holds it
    assert porter(["data", str(tmp_path / "sr.pt"), "-o", str(tmp_path / "nchw")]) == 0
    schema = json.loads((tmp_path / "nchw" / "schema.json").read_text())
    assert schema["channels_last_io"] is False and schema["inputs"][0]["shape"] == [3, 5, 6]
    assert "layout" not in schema["inputs"][0]


def test_out_may_be_a_url_written_through_gfile(tmp_path):
    """-o gs://... goes through tf.io.gfile; file:// takes the same path here (Path would fold '//' into '/')."""
    features = np.arange(30, dtype=np.float32).reshape(10, 3)
    np.save(tmp_path / "x.npy", features)
    np.save(tmp_path / "y.npy", np.arange(10))
    url = f"file://{tmp_path}/url-records"
    assert porter(["data", str(tmp_path / "x.npy"), str(tmp_path / "y.npy"), "-o", url, "--hosts", "1"]) == 0
    schema = json.loads((tmp_path / "url-records" / "schema.json").read_text())
    assert len(schema["files"]) == 8
    np.testing.assert_array_equal(records(tmp_path / "url-records", schema)["x"], features)
    assert porter(["data", str(tmp_path / "x.npy"), str(tmp_path / "y.npy"), "-o", url, "--shards", "2",
                   "--force"]) == 0
    assert sorted(p.name for p in (tmp_path / "url-records").glob("*.tfrecord")) == [
        "data-00000-of-00002.tfrecord", "data-00001-of-00002.tfrecord"]  # --force removed the 8 old files
