"""porter's default loss (a source without training code: CrossEntropyLoss) fitted to the output the model really
gives: train_tpu.py trains an output without class scores on torch's class axis (one score per example, or a single
class) by regression (MSELoss, said in its log line) instead of failing in teacher_targets; outputs with class
scores keep CrossEntropy. A source that names its loss keeps it as written (no DEFAULT_LOSS)."""

import os
import subprocess
import sys

import numpy as np
import pytest

from tests.training.helpers import convert_source, load_module

SOURCE = """
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, {features})

    def forward(self, x):
        return {output}
"""
# name: (Linear features, forward's return, output shape for a batch of 4, the loss train_tpu.py trains with)
HEADS = {
    "scores": (1, "self.fc(x).squeeze(-1)", (4,), "MSELoss"),
    "one_class": (1, "self.fc(x)", (4, 1), "MSELoss"),
    "logits": (3, "self.fc(x)", (4, 3), "CrossEntropyLoss"),
    "per_position": (15, "self.fc(x).view(-1, 3, 5)", (4, 3, 5), "CrossEntropyLoss"),
}


def _port(root, name):
    features, output, _, _ = HEADS[name]
    source = root / f"default_loss_{name}.py"
    source.write_text(SOURCE.format(features=features, output=output))
    convert_source(source, root / name, "--input-shape", "8")
    return root / name


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    root = tmp_path_factory.mktemp("default_loss")
    return {name: _port(root, name) for name in HEADS}


@pytest.mark.parametrize("name", sorted(HEADS))
def test_the_default_loss_fits_the_output_rank(ports, name, tmp_path, capsys):
    _, _, shape, loss = HEADS[name]
    train = load_module(ports[name] / "train_tpu.py")
    assert train.DEFAULT_LOSS and train.TARGET_KIND == "class"
    expected_kind = "regression" if loss == "MSELoss" else "class"
    assert train.target_kind(shape) == expected_kind
    targets = train.teacher_targets(np.random.default_rng(0).standard_normal(shape))
    assert targets.dtype == (np.float32 if expected_kind == "regression" else np.int64)
    assert targets.shape == (shape if expected_kind == "regression" else shape[:1] + shape[2:])
    run = ["--steps", "2", "--batch-size", "8", "--strategy", "cpu", "--no-export", "--output-dir", str(tmp_path)]
    assert train.main(run) == 0
    said = "porter's default loss is MSELoss" in capsys.readouterr().out
    assert said == (loss == "MSELoss")


def test_the_scores_repro_trains_over_two_replicas_without_a_traceback(ports, tmp_path):
    """`python train_tpu.py --simulate-replicas 2 --steps 3` in the port of `return self.fc(x).squeeze(-1)`."""
    done = subprocess.run([sys.executable, "train_tpu.py", "--simulate-replicas", "2", "--steps", "3",
                           "--output-dir", str(tmp_path / "run")], cwd=ports["scores"], capture_output=True,
                          text=True, timeout=300, check=False, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert ("train_tpu.py: the model's output (batch) has no class scores on axis 1: porter's default loss is "
            "MSELoss") in done.stdout


def test_a_loss_the_source_names_is_kept(tmp_path):
    """Training code with its own loss: no DEFAULT_LOSS, no fitting."""
    source = tmp_path / "named_loss.py"
    source.write_text(SOURCE.format(features=1, output="self.fc(x).squeeze(-1)") + """

model = Head()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.MSELoss()
for x, y in []:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
""")
    convert_source(source, tmp_path / "out", "--input-shape", "8")
    text = (tmp_path / "out" / "train_tpu.py").read_text()
    assert "DEFAULT_LOSS" not in text and "def fitted_loss" not in text and "support.MSELoss()" in text
