"""Idioms of recurrent time-series models from tutorials (each against real torch with drawn sizes):

- `init_hidden` building the state from a parameter (`weight = next(self.parameters()).data`, then
  `weight.new(n_layers, batch_size, hidden_dim).zero_()`, floydhub's GRUNet, PyTorch's word language model): the
  Module's own `parameters()` yields the port's variables and `next` of it is a parameter (was `call_module(
  self.parameters)` and `.data` of a Keras variable: AttributeError);
- a Conv1d over a batch-first sequence (`x.permute(0, 2, 1)`, the conv, `permute(0, 2, 1)` back, then an LSTM): a
  rank-3 `permute(0, 2, 1)` at the top of forward no longer makes the model's input channels-last at its boundary,
  the sequence is held as it lies and the Conv1d takes it so (was 2 Transposes, now none).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import assert_matches_torch, snippet_ports

SOURCE = '''
import torch
import torch.nn as nn


class GRUNet(nn.Module):
    def __init__(self, input_dim=3, hidden_dim=8, output_dim=2, n_layers=2):
        super(GRUNet, self).__init__()
        self.hidden_dim = hidden_dim
        self.n_layers = n_layers
        self.gru = nn.GRU(input_dim, hidden_dim, n_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, output_dim)

    def forward(self, x):
        h = self.init_hidden(x.shape[0])
        out, h = self.gru(x, h)
        return self.fc(torch.relu(out[:, -1])), h

    def init_hidden(self, batch_size):
        weight = next(self.parameters()).data
        return weight.new(self.n_layers, batch_size, self.hidden_dim).zero_()


class Net(nn.Module):
    def __init__(self, conv_first=True):
        super().__init__()
        self.conv_first = conv_first
        self.conv = nn.Conv1d(3, 6, 3, padding=1)
        self.lstm = nn.LSTM(6 if conv_first else 3, 8, batch_first=True)
        self.gru = GRUNet()
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        if self.conv_first:
            y = x.permute(0, 2, 1)
            y = torch.relu(self.conv(y))
            y = y.permute(0, 2, 1)
        else:
            y = x
        out, (h, c) = self.lstm(y)
        scores, state = self.gru(x)
        return self.fc(h[-1]) + scores, state
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """conv_first -> output folder of the port built with it."""
    return snippet_ports(tmp_path_factory, SOURCE, "7,3", "conv_first")


@settings(max_examples=5, deadline=None)
@given(conv_first=st.booleans(), batch=st.integers(1, 3), length=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_time_series_idioms_match_torch(ported, conv_first, batch, length, seed):
    assert_matches_torch(ported(conv_first), seed, (batch, length, 3))


def test_a_conv_over_a_batch_first_sequence_traces_no_transpose(ported):
    pair = PortedPair(ported(True), seed=1)
    x = np.random.default_rng(1).standard_normal((2, 7, 3)).astype("float32")
    assert count_transposes(pair.keras_model, [x]) == 0
