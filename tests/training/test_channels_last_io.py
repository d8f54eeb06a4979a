"""train_tpu.py with channels-last images: `--channels-last-io` (or data `porter data --channels-last-io` wrote)
feeds NHWC batches to a model whose `channels_last_io` is on, so a convnet trains without a Transpose; the
combinations that cannot work stop with one line and exit 2."""

import json
import subprocess
import sys

import numpy as np
import pytest

from porter.cli import main as porter
from tests.training.helpers import FIXTURES, convert_source


@pytest.fixture(scope="module")
def lenet(tmp_path_factory):
    out = tmp_path_factory.mktemp("lenet") / "port"
    manifest = convert_source(FIXTURES / "lenet.py", out)
    entry = next(c for c in manifest["sources"][0]["classes"] if c["name"] == manifest["main_class"])
    assert [spec["channels_last_io"] for spec in entry["example_inputs"]] == [True]
    return out, entry["example_inputs"][0]["shape"]


def train(port, *flags):
    runs = sorted(port.parent.glob("run-*"))  # a fresh output directory each time: no checkpoint to resume
    return subprocess.run([sys.executable, str(port / "train_tpu.py"), "--steps", "4", "--batch-size", "8",
                           "--no-export", "--output-dir", str(port.parent / f"run-{len(runs)}"), *flags],
                          capture_output=True, text=True, cwd=port, timeout=600)


def metrics(result):
    return json.loads(result.stdout.strip().splitlines()[-1].split("train_tpu.py: ", 1)[1])


def test_synthetic_images_channels_last(lenet):
    port, _ = lenet
    result = train(port, "--channels-last-io")
    assert result.returncode == 0, result.stderr[-2000:]
    run = metrics(result)
    assert run["jit_compile"] and np.isfinite(run["final_loss"])


def test_records_written_channels_last_switch_it_on(lenet, tmp_path):
    port, shape = lenet
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "d.npz", images=rng.standard_normal((32, *shape)).astype(np.float32),
             labels=rng.integers(0, 10, 32))
    assert porter(["data", str(tmp_path / "d.npz"), "-o", str(tmp_path / "nhwc"), "--target", "labels",
                   "--channels-last-io"]) == 0
    result = train(port, "--data", str(tmp_path / "nhwc"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert np.isfinite(metrics(result)["final_loss"])

    assert porter(["data", str(tmp_path / "d.npz"), "-o", str(tmp_path / "nchw"), "--target", "labels"]) == 0
    refused = train(port, "--data", str(tmp_path / "nchw"), "--channels-last-io")
    assert refused.returncode == 2 and refused.stderr.strip().count("\n") == 0, refused.stderr
    assert "porter data --channels-last-io" in refused.stderr


def test_a_model_without_images_refuses(tmp_path):
    out = tmp_path / "port"
    convert_source(FIXTURES / "gpt_mini.py", out)
    result = train(out, "--channels-last-io")
    assert result.returncode == 2 and "no image input" in result.stderr, result.stderr
