"""`torch.cat` of one-channel maps along dim 1 (porter/rules/tensor_ops.py `_one_channel_maps`): Tacotron2's
location-sensitive attention stacks the attention weights and their running sum, `torch.cat((w.unsqueeze(1),
cum.unsqueeze(1)), dim=1)`, for a Conv1d. Each piece is channels-last by a reshape, so they join on the last axis
for the conv (a Transpose per decoder step before). The decoder loop matches torch eagerly and under XLA and traces
none; a cat of such maps read in torch's order after it (a sum over the channels, a flatten) matches too."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

SOURCE = '''
import torch
from torch import nn
from torch.nn import functional as F


class Attention(nn.Module):
    def __init__(self, rnn_dim=8, embedding_dim=6, attention_dim=5, filters=4, kernel_size=3, steps=3):
        super().__init__()
        self.steps = steps
        self.query_layer = nn.Linear(rnn_dim, attention_dim, bias=False)
        self.memory_layer = nn.Linear(embedding_dim, attention_dim, bias=False)
        self.v = nn.Linear(attention_dim, 1, bias=False)
        self.location_conv = nn.Conv1d(2, filters, kernel_size, padding=(kernel_size - 1) // 2, bias=False)
        self.location_dense = nn.Linear(filters, attention_dim, bias=False)
        self.rnn = nn.LSTMCell(embedding_dim, rnn_dim)

    def forward(self, memory):
        B, T, _ = memory.shape
        processed_memory = self.memory_layer(memory)
        weights = memory.new_zeros(B, T)
        cumulative = memory.new_zeros(B, T)
        h = memory.new_zeros(B, 8)
        c = memory.new_zeros(B, 8)
        context = memory.new_zeros(B, memory.size(2))
        outputs = []
        for _ in range(self.steps):
            h, c = self.rnn(context, (h, c))
            weights_cat = torch.cat((weights.unsqueeze(1), cumulative.unsqueeze(1)), dim=1)
            location = self.location_dense(self.location_conv(weights_cat).transpose(1, 2))
            energies = self.v(torch.tanh(self.query_layer(h.unsqueeze(1)) + location + processed_memory))
            weights = F.softmax(energies.squeeze(-1), dim=1)
            cumulative = cumulative + weights
            context = torch.bmm(weights.unsqueeze(1), memory).squeeze(1)
            outputs.append(context)
        return torch.stack(outputs, dim=1)
'''

READ_IN_TORCH_ORDER = '''
import torch
from torch import nn


class Maps(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(5, 5)

    def forward(self, x):
        y = self.proj(x)
        maps = torch.cat([y.unsqueeze(1), (y * 2).unsqueeze(1), x.unsqueeze(1)], 1)
        return maps.sum(1) + maps.flatten(1)[:, :5]
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    sources = {"attention": (SOURCE, "7,6"), "torch_order": (READ_IN_TORCH_ORDER, "5")}
    return cached(lambda name: port(tmp_path_factory.mktemp(name), sources[name][0], input_specs=(sources[name][1],)))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_location_features_match_torch_with_no_transpose(ported, batch, length, seed):
    x = random_input(seed, (batch, length, 6))
    assert_same_outputs(ported("attention"), [x], tolerance=1e-5)
    assert_same_outputs(ported("attention"), [x], tolerance=1e-5, jit=True)
    assert count_transposes(ported("attention").keras_model, [x]) == 0


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_maps_read_in_torch_order_match_torch(ported, batch, seed):
    x = random_input(seed, (batch, 5))
    assert_same_outputs(ported("torch_order"), [x], tolerance=1e-5)
    assert_same_outputs(ported("torch_order"), [x], tolerance=1e-5, jit=True)
