"""A class called on a tensor held permuted (a sequence-first model's `src.transpose(0, 1)`: (S, N, D) stored
batch-first) is translated for that layout, and what it returns keeps it: the PyTorch tutorial's PositionalEncoding
adds its (S, 1, D) table where the tokens lie instead of its caller transposing around the call (a held-out
seq-first transformer classifier traced 1 Transpose, now 0). A caller handing that class a tensor in torch's order
converts once to the layout the class takes."""

import pytest

from porter.verify.harness import count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import port, random_input

MODEL = '''
import math
import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=32):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)
        self.scale = nn.Parameter(torch.rand(d_model) + 0.5)

    def forward(self, x):
        x = x + self.pe[:x.size(0)]
        if x.size(0) > 1000:
            return x
        return x * self.scale


class Net(nn.Module):
    def __init__(self, memory=False):
        super().__init__()
        self.embedding = nn.Embedding(30, 16)
        self.pos_encoder = PositionalEncoding(16)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, 32, 0.0), 1)
        self.memory = nn.Parameter(torch.randn(6, 1, 16)) if memory else None
        self.classifier = nn.Linear(16, 3)

    def forward(self, src):
        src = self.embedding(src.transpose(0, 1)) * math.sqrt(16)
        src = self.pos_encoder(src)
        if self.memory is not None:
            src = src + self.pos_encoder(self.memory.expand(-1, src.size(1), -1)).mean(dim=0)
        output = self.encoder(src)
        return self.classifier(output.mean(dim=0))
'''


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("held_order_calls"), MODEL, input_specs=("6:int64:0:30",))


def tokens(seed):
    return (random_input(seed, (2, 6)) * 1000).astype("int64") % 30


def test_class_takes_the_sequence_as_it_lies(net):
    x = tokens(1)
    keras_model = assert_built_matches_torch(net, x)
    assert count_transposes(keras_model, [x]) == 0  # (1: the caller settled the transpose before the call)


def test_caller_in_torch_order_converts_to_the_class_layout(net):
    x = tokens(2)
    keras_model = assert_built_matches_torch(net, x, memory=True)
    assert count_transposes(keras_model, [x]) == 1  # the memory, brought to the layout the class takes


def test_class_used_alone_takes_and_returns_torch_order(net):
    """The block says the layout its call takes (`porter_layout`): called as a model of its own, it converts from
    and back to torch's order as a channels-last block does."""
    import numpy as np
    import torch

    x = random_input(3, (6, 2, 16))
    block = net.keras_module.PositionalEncoding(16)
    torch_block = net.torch_module.PositionalEncoding(16).eval()
    block(x)
    net.keras_module.load_state_dict(block, {k: v.numpy() for k, v in torch_block.state_dict().items()})
    with torch.no_grad():
        expected = torch_block(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(np.asarray(block(x)), expected, rtol=1e-5, atol=1e-5)
