"""A tensor held channels-last on one path of an `if` and a value porter cannot type on the other (r9y9's tacotron
CBHG: `if input_lengths is not None: x = nn.utils.rnn.pack_padded_sequence(x, ...)`, then `outputs, _ =
self.gru(x)`): after the join the name was taken for the untyped value, so on the path that skipped the packing the
GRU got the (B, C, T) tensor as it was held (a crash: "Expected 16, got 12", or wrong numbers where sizes agree).
The tensor now goes to torch's layout on its own path, as the untyped value is read. The CBHG matches torch."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
from torch import nn
import torch.nn.functional as F


class BatchNormConv1d(nn.Module):
    def __init__(self, in_dim, out_dim, kernel_size, stride, padding, activation=None):
        super(BatchNormConv1d, self).__init__()
        self.conv1d = nn.Conv1d(in_dim, out_dim, kernel_size=kernel_size, stride=stride, padding=padding, bias=False)
        self.bn = nn.BatchNorm1d(out_dim, momentum=0.99, eps=1e-3)
        self.activation = activation

    def forward(self, x):
        x = self.conv1d(x)
        if self.activation is not None:
            x = self.activation(x)
        return self.bn(x)


class Highway(nn.Module):
    def __init__(self, in_size, out_size):
        super(Highway, self).__init__()
        self.H = nn.Linear(in_size, out_size)
        self.H.bias.data.zero_()
        self.T = nn.Linear(in_size, out_size)
        self.T.bias.data.fill_(-1)
        self.relu = nn.ReLU()
        self.sigmoid = nn.Sigmoid()

    def forward(self, inputs):
        H = self.relu(self.H(inputs))
        T = self.sigmoid(self.T(inputs))
        return H * T + inputs * (1.0 - T)


class OpModel(nn.Module):
    """r9y9/tacotron_pytorch CBHG module."""

    def __init__(self, in_dim=16, K=4, projections=[32, 16]):
        super(OpModel, self).__init__()
        self.in_dim = in_dim
        self.relu = nn.ReLU()
        self.conv1d_banks = nn.ModuleList(
            [BatchNormConv1d(in_dim, in_dim, kernel_size=k, stride=1, padding=k // 2, activation=self.relu)
             for k in range(1, K + 1)])
        self.max_pool1d = nn.MaxPool1d(kernel_size=2, stride=1, padding=1)
        in_sizes = [K * in_dim] + projections[:-1]
        activations = [self.relu] * (len(projections) - 1) + [None]
        self.conv1d_projections = nn.ModuleList(
            [BatchNormConv1d(in_size, out_size, kernel_size=3, stride=1, padding=1, activation=ac)
             for (in_size, out_size, ac) in zip(in_sizes, projections, activations)])
        self.pre_highway = nn.Linear(projections[-1], in_dim, bias=False)
        self.highways = nn.ModuleList([Highway(in_dim, in_dim) for _ in range(2)])
        self.gru = nn.GRU(in_dim, in_dim, 1, batch_first=True, bidirectional=True)

    def forward(self, inputs, input_lengths=None):
        # (B, T_in, in_dim)
        x = inputs
        # Needed to perform conv1d on time-axis
        # (B, in_dim, T_in)
        x = x.transpose(1, 2)
        T = x.size(-1)
        # (B, in_dim*K, T_in)
        # Concat conv1d bank outputs
        x = torch.cat([conv1d(x)[:, :, :T] for conv1d in self.conv1d_banks], dim=1)
        assert x.size(1) == self.in_dim * len(self.conv1d_banks)
        x = self.max_pool1d(x)[:, :, :T]
        for conv1d in self.conv1d_projections:
            x = conv1d(x)
        # (B, T_in, in_dim)
        # Back to the original shape
        x = x.transpose(1, 2)
        # Residual connection
        x += inputs
        for highway in self.highways:
            x = highway(x)
        if input_lengths is not None:
            x = nn.utils.rnn.pack_padded_sequence(x, input_lengths, batch_first=True)
        # (B, T_in, in_dim*2)
        outputs, _ = self.gru(x)
        if input_lengths is not None:
            outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True)
        return outputs
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("cbhg"), textwrap.dedent(SOURCE), input_specs=("12,16",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), steps=st.sampled_from([5, 12, 16]))
def test_port_matches_torch(pair, seed, batch, steps):
    assert_same_outputs(pair, [random_input(seed, (batch, steps, 16))], tolerance=1e-4)
