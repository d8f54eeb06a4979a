"""A sequence-first recurrent layer handed `input.permute(1, 0, 2)` of a batch-first embedding together with its
initial state (prakashpandey9's text classifiers: `self.lstm(input, (h_0, c_0))`, then `output.permute(1, 0, 2)`
and attention by `torch.bmm`), one- and bidirectional.

What was slow before: only a layer called on the sequence alone ran on it as it lies (`swapped=True`), so with a
state handed the permute was settled, a Transpose per call at batch 2. The state is (layers, N, H) either way: it is
handed as torch's and the layer runs swapped. Each port matches torch, eagerly and under XLA, for drawn lengths and
batches, and traces no Transpose.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs

SOURCE = '''
import torch
import torch.nn as nn
from torch.autograd import Variable
from torch.nn import functional as F


class Net(nn.Module):
    def __init__(self, bidirectional=False, output_size=3, hidden_size=8, vocab_size=50, embedding_length=8):
        super().__init__()
        self.hidden_size = hidden_size
        self.directions = 2 if bidirectional else 1
        self.word_embeddings = nn.Embedding(vocab_size, embedding_length)
        self.lstm = nn.LSTM(embedding_length, hidden_size, bidirectional=bidirectional)
        self.label = nn.Linear(self.directions * hidden_size, output_size)

    def attention_net(self, lstm_output, final_state):
        hidden = final_state[-1].repeat(1, self.directions)
        attn_weights = torch.bmm(lstm_output, hidden.unsqueeze(2)).squeeze(2)
        soft_attn_weights = F.softmax(attn_weights, 1)
        return torch.bmm(lstm_output.transpose(1, 2), soft_attn_weights.unsqueeze(2)).squeeze(2)

    def forward(self, input_sentences):
        input = self.word_embeddings(input_sentences)
        input = input.permute(1, 0, 2)
        h_0 = Variable(torch.zeros(self.directions, input.size(1), self.hidden_size))
        c_0 = Variable(torch.ones(self.directions, input.size(1), self.hidden_size) * 0.5)
        output, (final_hidden_state, final_cell_state) = self.lstm(input, (h_0, c_0))
        output = output.permute(1, 0, 2)
        return self.label(self.attention_net(output, final_hidden_state)), final_cell_state
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """bidirectional -> output folder of the port built with it."""
    return snippet_ports(tmp_path_factory, SOURCE, "9:int64:0:50", "bidirectional")


@settings(max_examples=5, deadline=None)
@given(bidirectional=st.booleans(), batch=st.integers(1, 3), length=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_recurrent_layer_with_state_on_a_permuted_sequence_matches_torch(ported, bidirectional, batch, length, seed):
    tokens = np.random.default_rng(seed).integers(0, 50, (batch, length))
    pair = PortedPair(ported(bidirectional), seed=seed)
    assert_same_outputs(pair, [tokens], tolerance=1e-4)
    assert_same_outputs(pair, [tokens], tolerance=1e-4, jit=True)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_no_transpose_is_traced(ported, bidirectional):
    pair = PortedPair(ported(bidirectional), seed=1)
    assert count_transposes(pair.keras_model, [np.random.default_rng(1).integers(0, 50, (2, 6))]) == 0
