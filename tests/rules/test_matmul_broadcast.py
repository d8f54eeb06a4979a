"""`torch.matmul` broadcasting size-1 batch dims (CapsNet's DigitCaps: `torch.matmul(self.W, x)` with W (1, O, I, D,
d) and `x = caps.unsqueeze(1).unsqueeze(4)` (B, 1, I, d, 1)): the operands were written as one einsum over their
stored orders, whose shared batch labels do not broadcast (a crash at call). An operand with a size-1 batch dim now
goes to tf.matmul, which broadcasts as torch does; the port matches torch on drawn sizes, batch 1 included."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
