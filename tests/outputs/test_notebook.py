"""OUT/train_tpu.ipynb: valid nbformat 4, the same bytes for the same input, and executed headless on CPU (nbclient,
two simulated replicas) its Colab-only cells skip themselves, train_tpu.main trains and the loss curve falls."""

import ast
import json
import os
import re

import pytest

from porter.cli import main as porter
from tests.training.helpers import FIXTURES

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

FIXTURE = FIXTURES / "train_mnist.py"  # a convnet with a training loop: optimizer, schedule and loss from source
OVERRIDES = """\
STEPS = 30
BATCH_SIZE = 16
SIMULATE_REPLICAS = 2
EXTRA_ARGS = ["--no-export"]
"""


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    out = tmp_path_factory.mktemp("notebook") / "port"
    assert porter(["convert", str(FIXTURE), "-o", str(out)]) in (0, 1)
    return out


def code_cells(notebook):
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def test_notebook_is_valid_deterministic_and_listed(port, tmp_path):
    text = (port / "train_tpu.ipynb").read_text()
    notebook = nbformat.reads(text, as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata["accelerator"] == "TPU" and notebook.nbformat == 4
    for cell in code_cells(notebook):
        ast.parse(cell.source)  # every code cell is plain Python: no magics, runs in any kernel
        assert cell.outputs == [] and cell.execution_count is None
    assert [c.id for c in notebook.cells if "parameters" in c.metadata.get("tags", [])] == ["parameters"]
    assert porter(["convert", str(FIXTURE), "-o", str(tmp_path / "again")]) in (0, 1)
    assert (tmp_path / "again" / "train_tpu.ipynb").read_text() == text
    assert "train_tpu.ipynb" in json.loads((port / "porter-manifest.json").read_text())["files"]
    assert str(port) not in text and str(FIXTURES) not in text


def execute(port, overrides):
    """Run the notebook headless in `port` with `overrides` injected after the parameters cell (as papermill does);
    returns {cell id: printed text}."""
    notebook = nbformat.read(port / "train_tpu.ipynb", as_version=4)
    parameters = next(i for i, c in enumerate(notebook.cells) if "parameters" in c.metadata.get("tags", []))
    notebook.cells.insert(parameters + 1, nbformat.v4.new_code_cell(overrides, id="injected-parameters"))
    env_before = os.environ.get("KERAS_BACKEND")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")  # the kernel inherits this process's environment
    try:
        client = nbclient.NotebookClient(notebook, timeout=900, kernel_name="python3",
                                         resources={"metadata": {"path": str(port)}})
        client.execute()
    finally:
        if env_before is None:
            os.environ.pop("KERAS_BACKEND", None)
    return {cell.id: "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
            for cell in code_cells(notebook)}


def test_notebook_runs_headless_and_the_loss_falls(port):
    printed = execute(port, OVERRIDES)
    assert "MirroredStrategy with 2 replica(s)" in printed["connect"]
    assert "--simulate-replicas 2" in printed["train"]
    metrics = json.loads((port / "tpu_run" / "metrics.json").read_text())
    assert metrics["strategy"] == "MirroredStrategy" and metrics["replicas"] == 2 and metrics["steps"] == 30
    curve = re.search(r"loss over (\d+) steps: first (\S+), last (\S+)", printed["loss-curve"])
    assert curve, printed["loss-curve"]
    steps, first, last = int(curve[1]), float(curve[2]), float(curve[3])
    assert steps == 30 and last < first
    assert metrics["last_loss_window_mean"] < metrics["first_loss_window_mean"]
    print(f"notebook loss: first {first}, last {last}; metrics {metrics}")


def test_notebook_trains_on_porter_data_records_copied_to_local_disk(port, tmp_path):
    import numpy as np

    rng = np.random.default_rng(0)
    np.savez(tmp_path / "d.npz", image=rng.standard_normal((64, 1, 28, 28)).astype(np.float32),
             label=rng.integers(0, 10, 64))
    records = tmp_path / "records"  # stands for a Drive folder: the notebook copies it to ./data first
    assert porter(["data", str(tmp_path / "d.npz"), "-o", str(records), "--hosts", "1"]) == 0
    overrides = f"DATA = {str(records)!r}\nSTEPS = 4\nBATCH_SIZE = 16\nOUTPUT_DIR = 'run_on_records'\n" \
                "EXTRA_ARGS = ['--no-export']\n"
    printed = execute(port, overrides)
    assert "data: data" in printed["data"] and "--data data" in printed["train"]
    assert sorted(p.name for p in (port / "data").iterdir()) == sorted(
        p.name for p in records.iterdir())  # 8 TFRecord files and schema.json
    metrics = json.loads((port / "run_on_records" / "metrics.json").read_text())
    assert metrics["steps"] == 4 and metrics["global_batch_size"] == 16
    assert "loss over 4 steps" in printed["loss-curve"]
