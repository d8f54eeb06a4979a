"""A recurrent layer's final states as a seq2seq decoder reads them (the PyTorch tutorial's Bahdanau attention:
`query = hidden.permute(1, 0, 2)` of a GRU's h_n, (1, N, H) for one layer one way). passes/recurrent_states.py reads
from the constructor that the first dim is 1; the permute is then settled at once by the runtime's `permute_axes`, a
reshape, instead of being left pending (the keys it met were transposed to it and the weights back: 8 Transposes
at batch 2 over four steps, none now). The knowledge is a hint: with two layers, or two directions, the permute
stays pending as before, and every variant matches torch eagerly and under XLA."""

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.frontend.source import parse_source
from porter.passes.recurrent_states import one_unidirectional_layer
from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port

TEMPLATE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.Wa = nn.Linear(hidden, hidden)
        self.Ua = nn.Linear(hidden, hidden)
        self.Va = nn.Linear(hidden, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        weights = F.softmax(scores.squeeze(2).unsqueeze(1), dim=-1)
        return torch.bmm(weights, keys), weights


class Decoder(nn.Module):
    def __init__(self, vocab=12, hidden=8, steps=3):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.encoder = {encoder}
        self.attention = Attention(hidden)
        self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)
        self.steps = steps

    def forward(self, src):
        keys, hidden = self.encoder(self.embedding(src))
        {fold}
        token = torch.zeros(src.size(0), 1, dtype=torch.long)
        outputs = []
        for _ in range(self.steps):
            query = hidden.permute(1, 0, 2)
            context, _ = self.attention(query, keys)
            output, hidden = self.gru(torch.cat((self.embedding(token), context), dim=2), hidden)
            output = self.out(output)
            outputs.append(output)
            token = output.argmax(-1)
        return torch.cat(outputs, dim=1)
'''
ENCODERS = {
    "one_layer": ("nn.GRU(hidden, hidden, batch_first=True)", "", 0),
    "one_layer_literals": ("nn.GRU(hidden, hidden, num_layers=1, batch_first=True, bidirectional=False)", "", 0),
    # two layers: the decoder takes the last one's state, (1, N, H) again only at run time
    "two_layers": ("nn.GRU(hidden, hidden, 2, batch_first=True)", "hidden = hidden[-1:]", None),
    # two directions summed into one state
    "bidirectional": ("nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)",
                      "hidden = hidden[:1] + hidden[1:]; keys = keys[:, :, :8] + keys[:, :, 8:]", None),
}


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    cache = {}

    def get(name):
        if name not in cache:
            encoder, fold, _ = ENCODERS[name]
            source = TEMPLATE.replace("{encoder}", encoder).replace("{fold}", fold)
            cache[name] = port(tmp_path_factory.mktemp(name), source, input_specs=("5:int64:0:12",))
        return cache[name]

    return get


@settings(max_examples=4, deadline=None)
@given(name=st.sampled_from(sorted(ENCODERS)), batch=st.integers(1, 3), length=st.integers(1, 6),
       seed=st.integers(0, 2**16))
def test_decoder_reading_its_state_as_queries_matches_torch(pairs, name, batch, length, seed):
    ids = np.random.default_rng(seed).integers(0, 12, (batch, length))
    assert_same_outputs(pairs(name), [ids], tolerance=1e-5)
    assert_same_outputs(pairs(name), [ids], tolerance=1e-5, jit=True)


@pytest.mark.parametrize("name", [n for n, (_, _, bound) in ENCODERS.items() if bound is not None])
def test_one_layer_state_permuted_traces_no_transpose(pairs, name):
    ids = np.random.default_rng(0).integers(0, 12, (2, 5))
    assert count_transposes(pairs(name).keras_model, [ids]) == ENCODERS[name][2]


CONSTRUCTORS = '''
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.plain = nn.GRU(4, 8)
        self.literal = nn.LSTM(4, 8, 1, True, True, 0.0, False)
        self.two = nn.GRU(4, 8, 2)
        self.both_ways = nn.RNN(4, 8, bidirectional=True)
        self.unknown = nn.GRU(4, 8, num_layers=n)
        if n:
            self.maybe = nn.GRU(4, 8)
        else:
            self.maybe = nn.GRU(4, 8, num_layers=3)
'''


def test_one_unidirectional_layer_reads_literals_and_defaults(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(textwrap.dedent(CONSTRUCTORS))
    source = parse_source(path)
    info = source.classes["Net"]
    cases = (("plain", "torch.nn.GRU"), ("literal", "torch.nn.LSTM"), ("two", "torch.nn.GRU"),
             ("both_ways", "torch.nn.RNN"), ("unknown", "torch.nn.GRU"), ("maybe", "torch.nn.GRU"),
             ("plain", "torch.nn.LSTM"))  # (the last: a GRU is no LSTM)
    found = [one_unidirectional_layer(source, info, name, canonical) for name, canonical in cases]
    assert found == [True, True, False, False, False, False, False]
