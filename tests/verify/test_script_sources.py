"""A tutorial written as one script (model class, then data loading, training and saving at module level): the
conversion lists the script's lines in the manifest, and `porter verify` / the generated test_equivalence.py build
the torch reference without running them (no training, no downloads), line numbers kept for tracebacks."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from porter.convert import ConvertOptions, convert
from porter.frontend.script_code import script_line_ranges
from porter.frontend.source import parse_source
from porter.output import write_tree
from porter.verify.harness import PortedPair

REPOSITORY = Path(__file__).resolve().parents[2]

TUTORIAL = '''
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

MARKER = os.environ["PORTER_TEST_MARKER"]  # the script writes here when it runs
BATCH_SIZE = 8
HIDDEN = 32
data = torch.randn(64, 1, 12, 12)
labels = torch.randint(0, 3, (64,))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc1 = nn.Linear(4 * 5 * 5, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


net = Net()
optimizer = optim.SGD(net.parameters(), lr=0.01)
for epoch in range(2):
    for start in range(0, 64, BATCH_SIZE):
        optimizer.zero_grad()
        loss = F.cross_entropy(net(data[start:start + BATCH_SIZE]), labels[start:start + BATCH_SIZE])
        loss.backward()
        optimizer.step()
with open(MARKER, "w") as handle:
    handle.write("trained")
torch.save(net.state_dict(), os.path.join(os.path.dirname(MARKER), "net.pth"))
'''


def test_script_lines_are_the_statements_that_run_something(tmp_path):
    path = tmp_path / "tutorial.py"
    path.write_text(textwrap.dedent(TUTORIAL).lstrip("\n"))
    ranges = script_line_ranges(parse_source(path, path.name))
    lines = path.read_text().splitlines()
    skipped = {lines[i - 1].split("(")[0].split(" =")[0] for first, last in ranges for i in range(first, last + 1)}
    assert {"data", "labels", "net", "optimizer", "for epoch in range", "with open", "torch.save"} <= skipped
    kept = [line for number, line in enumerate(lines, 1) if not any(a <= number <= b for a, b in ranges)]
    assert "BATCH_SIZE = 8" in kept and "HIDDEN = 32" in kept and "class Net(nn.Module):" in kept
    assert any(line.startswith("MARKER") for line in kept)  # an assignment that calls nothing: kept


def test_verify_builds_the_reference_without_running_the_script(tmp_path, monkeypatch):
    marker = tmp_path / "ran.txt"
    monkeypatch.setenv("PORTER_TEST_MARKER", str(marker))
    path = tmp_path / "tutorial.py"
    path.write_text(textwrap.dedent(TUTORIAL).lstrip("\n"))
    out = tmp_path / "out"
    conversion = convert(ConvertOptions(path, out))
    assert conversion.exit_code == 0
    write_tree(out, conversion.files)
    manifest = json.loads((out / "porter-manifest.json").read_text())
    assert manifest["sources"][0]["script_lines"]
    assert manifest["sources"][0]["classes"][0]["example_inputs"][0]["shape"] == [1, 12, 12]

    pair = PortedPair(out)
    inputs = pair.example_inputs(batch=2, seed=0)
    (want,), (got,) = pair.run_torch(inputs), pair.run_keras(inputs)
    assert float(abs(want - got).max()) < 1e-5
    assert not marker.exists(), "building the reference ran the training script"

    completed = subprocess.run([sys.executable, "-m", "porter", "verify", str(out)], capture_output=True, text=True,
                               cwd=REPOSITORY, check=False, env={**__import__("os").environ,
                                                                 "PORTER_TEST_MARKER": str(marker)})
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert not marker.exists()
