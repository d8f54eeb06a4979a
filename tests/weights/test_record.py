"""The weights record: `convert --weights` then `diff` is clean; after a source change `diff` says the .weights.h5 no
longer fits, and `convert --force` without `--weights` keeps it with a warning; stale train_tpu.py checkpoints are
named; the convert summary says how to load the weights, and that way works.
"""

import json
import sys

import numpy as np
import pytest

from porter.cli import main

torch = pytest.importorskip("torch")
pytest.importorskip("tensorflow")

SOURCE = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)
"""


def run(argv, capsys):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def converted(tmp_path, capsys):
    """(source, weights, out, convert stdout) after `porter convert net.py -o out --weights net.pt`."""
    source, weights, out = tmp_path / "net.py", tmp_path / "net.pt", tmp_path / "out"
    source.write_text(SOURCE)
    torch.manual_seed(0)
    torch.save({"fc.weight": torch.randn(3, 4), "fc.bias": torch.randn(3)}, weights)
    code, stdout, err = run(["convert", source, "-o", out, "--weights", weights, "--input-shape", "4"], capsys)
    assert code == 0, err
    assert (out / "net.weights.h5").is_file()
    return source, weights, out, stdout


def test_diff_right_after_convert_with_weights_is_clean(converted, capsys):
    source, _, out, _ = converted
    code, stdout, err = run(["diff", source, "-o", out], capsys)
    assert (code, stdout, err) == (0, "", "")
    files = json.loads((out / "porter-manifest.json").read_text())["files"]
    assert files == sorted(files[:-1]) + ["porter-manifest.json"] and "net.weights.h5" in files


def test_manifest_records_what_the_weights_fit(converted):
    record = json.loads((converted[2] / "porter-manifest.json").read_text())["weights"]
    assert record["file"] == "net.weights.h5" and record["converted_from"] == "../net.pt"
    assert record["layout"] == {"fc.bias": "3", "fc.weight": "3x4"}  # the Keras variables' shapes
    assert len(record["model_fingerprint"]) == 64


def test_diff_says_the_weights_no_longer_fit_after_a_source_change(converted, capsys):
    source, _, out, _ = converted
    source.write_text(SOURCE.replace("nn.Linear(4, 3)", "nn.Linear(4, 5)"))
    code, stdout, err = run(["diff", source, "-o", out], capsys)
    assert code == 1 and "+        self.fc = Linear(4, 5)" in stdout
    assert err.count("\n") == 1, err
    assert "net.weights.h5 no longer fits the regenerated model (fc.bias 3 -> 5; fc.weight 3x4 -> 5x4)" in err
    assert "--force --weights FILE" in err


def test_diff_after_a_change_that_keeps_the_layout_says_nothing_about_weights(converted, capsys):
    source, _, out, _ = converted
    source.write_text(SOURCE.replace("return self.fc(x)", "return self.fc(x) * 2"))
    code, stdout, err = run(["diff", source, "-o", out], capsys)
    assert code == 1 and "* 2" in stdout and err == ""


def test_force_without_weights_keeps_them_and_warns_when_the_model_changed(converted, capsys):
    source, weights, out, _ = converted
    before = (out / "net.weights.h5").read_bytes()
    source.write_text(SOURCE.replace("nn.Linear(4, 3)", "nn.Linear(4, 5)"))
    code, stdout, err = run(["convert", source, "-o", out, "--force", "--input-shape", "4"], capsys)
    assert code == 0, err
    assert (out / "net.weights.h5").read_bytes() == before
    manifest = json.loads((out / "porter-manifest.json").read_text())
    assert "net.weights.h5" in manifest["files"] and manifest["weights"]["layout"]["fc.bias"] == "3"
    warnings = [line for line in err.splitlines() if "net.weights.h5" in line]
    assert len(warnings) == 1 and "may no longer fit" in warnings[0] and str(weights) in warnings[0], err
    assert "load_weights" not in stdout  # no loading advice for weights that may not fit
    code, _, err = run(["diff", source, "-o", out], capsys)  # the record still describes the old weights
    assert code == 1 and "no longer fits" in err


def test_force_without_weights_on_unchanged_code_keeps_them_quietly(converted, capsys):
    source, _, out, _ = converted
    code, stdout, err = run(["convert", source, "-o", out, "--force", "--input-shape", "4"], capsys)
    assert code == 0 and err == ""
    assert (out / "net.weights.h5").is_file() and "load_weights" in stdout
    assert run(["diff", source, "-o", out], capsys)[:3] == (0, "", "")


def test_force_warns_about_checkpoints_of_the_previous_model(converted, capsys):
    source, _, out, _ = converted
    checkpoints = out / "tpu_run" / "checkpoints"
    checkpoints.mkdir(parents=True)
    (checkpoints / "checkpoint").write_text('model_checkpoint_path: "ckpt-2"\n')
    code, _, err = run(["convert", source, "-o", out, "--force", "--input-shape", "4"], capsys)
    assert code == 0 and "checkpoints" not in err  # same model code: resuming is what the user wants
    source.write_text(SOURCE.replace("nn.Linear(4, 3)", "nn.Linear(4, 5)"))
    code, _, err = run(["diff", source, "-o", out], capsys)  # diff says so before convert --force
    assert code == 1 and f"{checkpoints} holds checkpoints of the previous model code" in err
    code, _, err = run(["convert", source, "-o", out, "--force", "--input-shape", "4"], capsys)
    lines = [line for line in err.splitlines() if "checkpoints" in line and "net.weights.h5" not in line]
    assert code == 0 and len(lines) == 1 and str(checkpoints) in lines[0] and "--output-dir" in lines[0], err
    assert (checkpoints / "checkpoint").is_file()  # the user's training state is left in place


def test_the_load_hint_of_the_convert_summary_works(converted, monkeypatch):
    _, weights, out, stdout = converted
    hint = next(line for line in stdout.splitlines() if "load_weights" in line)
    snippet = hint.split("`")[1]
    monkeypatch.syspath_prepend(str(out))
    namespace = {}
    try:
        exec(snippet, namespace)  # noqa: S102 - the advice exactly as printed
    finally:
        sys.modules.pop("net_keras", None)
    state = torch.load(weights)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype("float32")
    want = (torch.from_numpy(x) @ state["fc.weight"].T + state["fc.bias"]).numpy()
    np.testing.assert_allclose(np.asarray(namespace["model"](x)), want, rtol=1e-5, atol=1e-5)
