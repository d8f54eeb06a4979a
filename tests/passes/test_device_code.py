"""Device code in model files: `device = torch.device("cuda" if torch.cuda.is_available() else "cpu")` at module
level (used by the model's `torch.empty(..., device=device)`) and inside forward/__init__ ports to None / False
(TensorFlow places ops itself), and the models match torch."""

import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SEQ2SEQ = Path(__file__).resolve().parent / "seq2seq_tutorial.py"

IN_FORWARD = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.use_cuda = torch.cuda.is_available()

    def forward(self, x):
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        h = torch.zeros(x.shape[0], 3, device=dev)
        if torch.cuda.is_available() or self.use_cuda:
            h = h + 1
        return self.fc(x.to(dev)) + h
'''


def test_device_queries_in_forward_and_init(tmp_path):
    pair = port(tmp_path, textwrap.dedent(IN_FORWARD), input_specs=("4",))
    assert_same_outputs(pair, [random_input(0, (3, 4))], tolerance=1e-6, what="device code")
    text = pair.keras_module.__loader__.get_source(pair.keras_module.__name__)
    assert "torch" not in text.split("# --- ported from")[-1]


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_seq2seq_tutorial_with_module_level_device_matches_torch(seq2seq, batch, length, seed):
    tokens = np.random.default_rng(seed).integers(0, 50, (batch, length)).astype(np.int64)
    assert_same_outputs(seq2seq, [tokens], tolerance=1e-5, what=f"seq2seq tokens {tokens.shape}")


def test_seq2seq_tutorial_traces_no_transpose(seq2seq):
    """A sequence model: none (10 at batch 2 before: the decoder's `hidden.permute(1, 0, 2)` of its one-layer GRU's
    state was left pending, the keys transposed to it and the weights back, every step; tests/passes/
    test_recurrent_states.py)."""
    from porter.verify.harness import count_transposes

    tokens = np.random.default_rng(0).integers(0, 50, (2, 7)).astype(np.int64)
    assert count_transposes(seq2seq.keras_model, [tokens]) == 0


def test_seq2seq_tutorial_carries_device_as_none(seq2seq):
    text = seq2seq.keras_module.__loader__.get_source(seq2seq.keras_module.__name__)
    assert "\ndevice = None\n" in text


@pytest.fixture(scope="module")
def seq2seq(tmp_path_factory):
    from porter.convert import ConvertOptions, convert
    from porter.output import write_tree
    from porter.verify.harness import PortedPair

    folder = tmp_path_factory.mktemp("seq2seq")
    path = folder / "seq2seq_tutorial.py"
    path.write_text(SEQ2SEQ.read_text())
    conversion = convert(ConvertOptions(path, folder / "out", class_name="Seq2Seq", input_specs=["7:int64:0:50"]))
    assert conversion.exit_code == 0
    write_tree(folder / "out", conversion.files)
    return PortedPair(folder / "out")
