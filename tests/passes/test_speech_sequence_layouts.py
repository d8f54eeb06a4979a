"""SeanNaren's DeepSpeech2 as written (a conv front end whose features are viewed into a (T, N, H) sequence,
sequence-first LSTMs wrapped in `BatchRNN` with `SequenceWise(nn.BatchNorm1d)` (`x.view(t * n, -1)`, the norm, the
view back), a bidirectional sum through a view, the uni-directional Lookahead conv).

What was slow before: `SequenceWise`'s first layer, a BatchNorm1d, was taken for what its input meets, though it
meets `x.view(t * n, -1)` first, so every `BatchRNN` was handed its sequence channels-last and converted it back
(9 Transposes at batch 2; torch's own code moves the data 3 times). A view or reshape of the parameter before any
layer now leaves the layout to the caller. The ports match torch, eagerly and under XLA, for drawn lengths and
batches.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import assert_matches_torch, snippet_ports

SOURCE = '''
import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class SequenceWise(nn.Module):
    def __init__(self, module):
        super(SequenceWise, self).__init__()
        self.module = module

    def forward(self, x):
        t, n = x.size(0), x.size(1)
        x = x.view(t * n, -1)
        x = self.module(x)
        x = x.view(t, n, -1)
        return x


class InferenceBatchSoftmax(nn.Module):
    def forward(self, input_):
        if not self.training:
            return F.softmax(input_, dim=-1)
        else:
            return input_


class BatchRNN(nn.Module):
    def __init__(self, input_size, hidden_size, rnn_type=nn.LSTM, bidirectional=False, batch_norm=True):
        super(BatchRNN, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bidirectional = bidirectional
        self.batch_norm = SequenceWise(nn.BatchNorm1d(input_size)) if batch_norm else None
        self.rnn = rnn_type(input_size=input_size, hidden_size=hidden_size,
                            bidirectional=bidirectional, bias=True)
        self.num_directions = 2 if bidirectional else 1

    def flatten_parameters(self):
        self.rnn.flatten_parameters()

    def forward(self, x):
        if self.batch_norm is not None:
            x = self.batch_norm(x)
        x, h = self.rnn(x)
        if self.bidirectional:
            x = x.view(x.size(0), x.size(1), 2, -1).sum(2).view(x.size(0), x.size(1), -1)
        return x


class Lookahead(nn.Module):
    def __init__(self, n_features, context):
        super(Lookahead, self).__init__()
        assert context > 0
        self.context = context
        self.n_features = n_features
        self.pad = (0, self.context - 1)
        self.conv = nn.Conv1d(
            self.n_features,
            self.n_features,
            kernel_size=self.context,
            stride=1,
            groups=self.n_features,
            padding=0,
            bias=False
        )

    def forward(self, x):
        x = x.transpose(0, 1).transpose(1, 2)
        x = F.pad(x, pad=self.pad, value=0)
        x = self.conv(x)
        x = x.transpose(1, 2).transpose(0, 1).contiguous()
        return x


class Net(nn.Module):
    def __init__(self, bidirectional=True, n_fft=30, hidden_size=16, hidden_layers=2, num_classes=5):
        super().__init__()
        self.bidirectional = bidirectional
        self.conv = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=(11, 11), stride=(2, 2), padding=(5, 5)),
            nn.BatchNorm2d(8),
            nn.Hardtanh(0, 20, inplace=True),
            nn.Conv2d(8, 8, kernel_size=(11, 11), stride=(2, 1), padding=(5, 5)),
            nn.BatchNorm2d(8),
            nn.Hardtanh(0, 20, inplace=True)
        )
        rnn_input_size = int(math.floor(n_fft + 2 * 5 - 11) / 2 + 1)
        rnn_input_size = int(math.floor(rnn_input_size + 2 * 5 - 11) / 2 + 1)
        rnn_input_size *= 8

        self.rnns = nn.Sequential(
            BatchRNN(
                input_size=rnn_input_size,
                hidden_size=hidden_size,
                rnn_type=nn.LSTM,
                bidirectional=self.bidirectional,
                batch_norm=False
            ),
            *(
                BatchRNN(
                    input_size=hidden_size,
                    hidden_size=hidden_size,
                    rnn_type=nn.LSTM,
                    bidirectional=self.bidirectional
                ) for x in range(hidden_layers - 1)
            )
        )

        self.lookahead = nn.Sequential(
            Lookahead(hidden_size, context=3),
            nn.Hardtanh(0, 20, inplace=True)
        ) if not self.bidirectional else None

        fully_connected = nn.Sequential(
            nn.BatchNorm1d(hidden_size),
            nn.Linear(hidden_size, num_classes, bias=False)
        )
        self.fc = nn.Sequential(
            SequenceWise(fully_connected),
        )
        self.inference_softmax = InferenceBatchSoftmax()

    def forward(self, x):
        x = self.conv(x)

        sizes = x.size()
        x = x.view(sizes[0], sizes[1] * sizes[2], sizes[3])  # Collapse feature dimension
        x = x.transpose(1, 2).transpose(0, 1).contiguous()  # TxNxH

        for rnn in self.rnns:
            x = rnn(x)

        if not self.bidirectional:  # no need for lookahead layer in bidirectional
            x = self.lookahead(x)

        x = self.fc(x)
        x = x.transpose(0, 1)
        x = self.inference_softmax(x)
        return x


'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """bidirectional -> output folder of the port built with it."""
    return snippet_ports(tmp_path_factory, SOURCE, "1,30,12", "bidirectional")


@settings(max_examples=4, deadline=None)
@given(bidirectional=st.booleans(), batch=st.integers(1, 2), frames=st.sampled_from([5, 12, 17]),
       seed=st.integers(0, 2**16))
def test_deepspeech_matches_torch(ported, bidirectional, batch, frames, seed):
    assert_matches_torch(ported(bidirectional), seed, (batch, 1, 30, frames))


def test_sequence_wise_norms_take_the_sequence_as_held(ported):
    pair = PortedPair(ported(True), seed=1)
    x = np.random.default_rng(1).standard_normal((2, 1, 30, 12)).astype("float32")
    assert count_transposes(pair.keras_model, [x]) <= 3
