"""`torch.matmul` broadcasting size-1 batch dims (CapsNet's DigitCaps: `torch.matmul(self.W, x)` with W (1, O, I, D,
d) and `x = caps.unsqueeze(1).unsqueeze(4)` (B, 1, I, d, 1)): the operands were written as one einsum over their
stored orders, whose shared batch labels do not broadcast (a crash at call). An operand with a size-1 batch dim now
goes to tf.matmul, which broadcasts as torch does; the port matches torch on drawn sizes, batch 1 included. A
size-1 batch dim both operands have (GCNet's context pooling: `torch.matmul(x.view(b, c, h * w).unsqueeze(1),
mask.unsqueeze(-1))`) broadcasts nothing: the einsum over the stored orders stays (no Transpose for the image)."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


def squash(s, dim=-1):
    squared_norm = (s ** 2).sum(dim=dim, keepdim=True)
    return squared_norm / (1 + squared_norm) * s / (torch.sqrt(squared_norm) + 1e-8)


class OpModel(nn.Module):
    def __init__(self, out_caps=3, in_caps=6, out_dim=5, in_dim=4, routings=2):
        super().__init__()
        self.routings = routings
        self.W = nn.Parameter(0.1 * torch.randn(1, out_caps, in_caps, out_dim, in_dim))

    def forward(self, x):  # (B, in_caps, in_dim)
        x = x.unsqueeze(1).unsqueeze(4)
        u_hat = torch.matmul(self.W, x).squeeze(-1)  # (B, out_caps, in_caps, out_dim)
        b = torch.zeros(u_hat.shape[0], u_hat.shape[1], u_hat.shape[2], 1)
        for i in range(self.routings):
            c = F.softmax(b, dim=1)
            v = squash((c * u_hat).sum(dim=2, keepdim=True))
            if i < self.routings - 1:
                b = b + (u_hat * v).sum(dim=-1, keepdim=True)
        return v.squeeze(2)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("capsules"), textwrap.dedent(SOURCE), input_specs=("6,4",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3))
def test_dynamic_routing_matches_torch(pair, seed, batch):
    assert_same_outputs(pair, [random_input(seed, (batch, 6, 4))])


CONTEXT_POOLING = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, 2, 1)
        self.conv_mask = nn.Conv2d(c, 1, 1)
        self.fc = nn.Linear(c, 4)

    def forward(self, x):
        x = self.stem(x)
        b, c, h, w = x.size()
        input_x = x.view(b, c, h * w).unsqueeze(1)
        mask = self.conv_mask(x).view(b, 1, h * w).softmax(2).unsqueeze(-1)
        context = torch.matmul(input_x, mask)
        return self.fc(context.view(b, c))
'''


@pytest.fixture(scope="module")
def context_pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("context_pooling"), textwrap.dedent(CONTEXT_POOLING), input_specs=("3,9,13",))


def test_a_size_1_dim_both_operands_have_moves_no_image(context_pair):
    context_pair.build()
    assert xla_transposes(context_pair.keras_model, random_input(0, (2, 3, 9, 13))) == 1  # the input's (was 2)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), height=st.integers(3, 15), width=st.integers(3, 15))
def test_context_pooling_matches_torch(context_pair, seed, batch, height, width):
    assert_same_outputs(context_pair, [random_input(seed, (batch, 3, height, width))])
