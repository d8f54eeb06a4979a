"""train_tpu.py resuming from checkpoints of other model code (a `convert --force` after a source change, which
keeps tpu_run/): one line naming the checkpoint directory and what to do, exit 2; no tensor values, no TensorFlow
warnings about unrestored values. Checkpoints of the same model still resume.
"""

import os
import subprocess
import sys

import pytest

from porter.cli import main

pytest.importorskip("tensorflow")

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "KERAS_BACKEND": "tensorflow"}
SOURCE = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(16, 32)
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))
"""


def train(out, steps):
    return subprocess.run([sys.executable, str(out / "train_tpu.py"), "--steps", str(steps), "--no-export",
                           "--batch-size", "8"], cwd=out, env=ENV, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_checkpoints_of_other_model_code_are_one_line(tmp_path, capsys):
    source, out = tmp_path / "net.py", tmp_path / "out"
    source.write_text(SOURCE)
    assert main(["convert", str(source), "-o", str(out), "--input-shape", "16"]) == 0
    first = train(out, 1)
    assert first.returncode == 0, first.stderr[-3000:]
    resumed = train(out, 2)  # the same model: resumes
    assert resumed.returncode == 0 and "resumed from" in resumed.stdout, resumed.stderr[-3000:]

    source.write_text(SOURCE.replace("nn.Linear(32, 10)", "nn.Linear(32, 12)"))
    capsys.readouterr()
    assert main(["convert", str(source), "-o", str(out), "--input-shape", "16", "--force"]) == 0
    assert "holds checkpoints of the previous model code" in capsys.readouterr().err

    result = train(out, 3)
    checkpoints = out / "tpu_run" / "checkpoints"
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-3000:]
    mentions = [line for line in result.stderr.splitlines() if "checkpoint" in line.lower() or "tensor" in line]
    assert len(mentions) == 1, result.stderr
    line = mentions[0]
    assert line.startswith(f"train_tpu.py: error: the checkpoints in {checkpoints} do not fit this model"), line
    assert "--checkpoint-dir" in line and "(12,)" in line and "(10,)" in line
    assert "WARNING:tensorflow" not in result.stderr and "numpy=" not in result.stderr, result.stderr
