"""A seq2seq GRU with additive attention written sequence-first (bentrevett's tutorial: `hidden.unsqueeze(1)
.repeat(1, src_len, 1)` joined with `encoder_outputs.permute(1, 0, 2)` along the features): the repeated hidden
state is broadcast again in the order the pending permute is held in (`permute_broadcast`), not transposed. Before,
every decoding step moved it and the attention weights (6 Transposes); now only the wrapper's own `src.t()` is one.
Greedy decoding feeds each step's argmax back. Matches torch at batch 1 and 2, eagerly and under XLA."""

import pytest

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, vocab=30, emb=16, hid=24):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hid, bidirectional=True)
        self.fc = nn.Linear(hid * 2, hid)

    def forward(self, src):  # (T, B)
        embedded = self.embedding(src)
        outputs, hidden = self.rnn(embedded)
        hidden = torch.tanh(self.fc(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)))
        return outputs, hidden


class Attention(nn.Module):
    def __init__(self, hid=24):
        super().__init__()
        self.attn = nn.Linear(hid * 3, hid)
        self.v = nn.Linear(hid, 1, bias=False)

    def forward(self, hidden, enc):
        src_len = enc.shape[0]
        hidden = hidden.unsqueeze(1).repeat(1, src_len, 1)
        enc = enc.permute(1, 0, 2)
        energy = torch.tanh(self.attn(torch.cat((hidden, enc), dim=2)))
        return F.softmax(self.v(energy).squeeze(2), dim=1)


class Decoder(nn.Module):
    def __init__(self, vocab=30, emb=16, hid=24):
        super().__init__()
        self.attention = Attention(hid)
        self.embedding = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(hid * 2 + emb, hid)
        self.fc_out = nn.Linear(hid * 3 + emb, vocab)

    def forward(self, input, hidden, enc):
        input = input.unsqueeze(0)
        embedded = self.embedding(input)
        a = self.attention(hidden, enc).unsqueeze(1)
        enc = enc.permute(1, 0, 2)
        weighted = torch.bmm(a, enc).permute(1, 0, 2)
        rnn_input = torch.cat((embedded, weighted), dim=2)
        output, hidden = self.rnn(rnn_input, hidden.unsqueeze(0))
        embedded, output, weighted = embedded.squeeze(0), output.squeeze(0), weighted.squeeze(0)
        return self.fc_out(torch.cat((output, weighted, embedded), dim=1)), hidden.squeeze(0)


class Net(nn.Module):
    def __init__(self, max_len=5):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Decoder()
        self.max_len = max_len

    def forward(self, src):  # src: (B, T) batch first for the probe
        src = src.t()
        enc, hidden = self.encoder(src)
        input = src[0, :]
        outs = []
        for t in range(self.max_len):
            output, hidden = self.decoder(input, hidden, enc)
            outs.append(output)
            input = output.argmax(1)
        return torch.stack(outs, dim=1)
'''


@pytest.mark.parametrize("batch", [1, 2])
def test_seq2seq_attention_matches_torch_moving_no_state(tmp_path_factory, batch):
    import numpy as np

    out = snippet_ports(tmp_path_factory, SOURCE, "7:int64:1:30")(None)
    pair = PortedPair(out, seed=batch)
    tokens = np.random.default_rng(batch).integers(1, 30, (batch, 7))
    assert_same_outputs(pair, [tokens], tolerance=1e-5)
    assert_same_outputs(pair, [tokens], tolerance=1e-5, jit=True)
    assert count_transposes(pair.keras_model, [tokens]) <= 1
