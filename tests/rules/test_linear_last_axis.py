"""Linear's `last_axis_only` rule flag (porter/rules/linear.py): a Linear contracts torch's last dim and treats every
other position alike, so it takes a tensor held permuted whose last dim is stored last as it lies, the result held
in the same order. Here a time-major GRU scans `x.permute(1, 0, 2)` of a batch-first sequence as it lies
(`swapped=True`: its (T, B, H) output held batch-first) and Linears read that output as it lies, their results
brought back by `transpose(0, 1)` / `permute(1, 0, 2)` (relabellings then); drawn batch and length, eagerly and
under XLA, no Transpose traced."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, features=5, hidden=6):
        super().__init__()
        self.rnn = nn.GRU(features, hidden)
        self.fc = nn.Linear(hidden, 3)
        self.gate = nn.Linear(hidden, 3, bias=False)

    def forward(self, x):
        out, _ = self.rnn(x.permute(1, 0, 2))
        return self.fc(out).transpose(0, 1) * torch.sigmoid(self.gate(out)).permute(1, 0, 2) + out.mean(0)[:, None, :3]
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("last_axis"), SOURCE, input_specs=("7,5",))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_linear_on_a_permuted_sequence_matches_torch(pair, batch, length, seed):
    x = random_input(seed, (batch, length, 5))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
    assert count_transposes(pair.keras_model, [x]) == 0
