"""An input of one value per example (`--input-shape ():int64:1:13`: a `(batch,)` tensor such as the sequence lengths
a packed LSTM takes, or a diffusion model's timesteps) reaches every output that draws example inputs: the manifest,
`porter verify`, and the training script's build sample (which must respect the range: a length is never 0)."""

import json
import subprocess
import sys
import textwrap

import pytest

from porter.cli import main, parse_input_specs
from porter.errors import UsageError

TAGGER = textwrap.dedent('''
    import torch.nn as nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


    class Tagger(nn.Module):
        def __init__(self, vocab=30, dim=8, hidden=6, tags=4):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.lstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
            self.out = nn.Linear(2 * hidden, tags)

        def forward(self, tokens, lengths):
            packed = pack_padded_sequence(self.embed(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False)
            y, _ = self.lstm(packed)
            y, _ = pad_packed_sequence(y, batch_first=True, total_length=tokens.shape[1])
            return self.out(y)
''')


def test_empty_parentheses_mean_one_value_per_example():
    lengths, steps = parse_input_specs(["():int64:1:13", "()"])
    assert (lengths.shape, lengths.dtype, lengths.low, lengths.high) == ([], "int64", 1, 13)
    assert (steps.shape, steps.dtype) == ([], "float32")
    with pytest.raises(UsageError, match="no sizes given"):
        parse_input_specs([":int64:1:13"])


@pytest.fixture(scope="module")
def tagger_out(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tagger")
    (directory / "tagger.py").write_text(TAGGER)
    out = directory / "out"
    assert main(["convert", str(directory / "tagger.py"), "-o", str(out),
                 "--input-shape", "9:int64:0:30", "--input-shape", "():int64:1:10"]) == 0
    return out


def test_lengths_input_is_in_the_manifest(tagger_out):
    manifest = json.loads((tagger_out / "porter-manifest.json").read_text())
    inputs = manifest["sources"][0]["classes"][-1]["example_inputs"]
    assert inputs[1] == {"shape": [], "dtype": "int64", "low": 1, "high": 10}


def test_lengths_model_verifies_equal(porter_cli, tagger_out):
    result = porter_cli("verify", tagger_out, "--examples", "4")
    assert result.code == 0, result.out + result.err
    assert "()" in result.out  # the drawn sizes name the scalar input


def test_training_script_builds_with_lengths_in_range(tagger_out):
    """The script builds the model on one example before training: a length of 0 would fail pack_padded_sequence."""
    result = subprocess.run([sys.executable, "train_tpu.py", "--steps", "2", "--no-export"], cwd=tagger_out,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
