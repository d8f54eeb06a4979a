"""Tensors a class registers in helper methods its __init__ calls (`define_relative_position_index()` with
`register_buffer(...)`, `self.table = nn.Parameter(...)`), also in an in-file base class, as torchvision's Swin
does: forward and the functions it calls see them as tensors (tensor indexing `table[index]` is a gather), and the
port matches torch."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


def _bias(table, index, n):
    b = table[index]
    return b.view(n, n, -1).permute(2, 0, 1)


class Attn(nn.Module):
    def __init__(self, heads=2, w=3):
        super().__init__()
        self.w = w
        self.define_table(heads)
        self.define_index()

    def define_table(self, heads):
        self.table = nn.Parameter(torch.randn((2 * self.w - 1) ** 2, heads))

    def define_index(self):
        coords = torch.stack(torch.meshgrid(torch.arange(self.w), torch.arange(self.w), indexing="ij"))
        flat = torch.flatten(coords, 1)
        rel = (flat[:, :, None] - flat[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += self.w - 1
        rel[:, :, 1] += self.w - 1
        rel[:, :, 0] *= 2 * self.w - 1
        self.register_buffer("index", rel.sum(-1).flatten())

    def get_bias(self):
        return _bias(self.table, self.index, self.w * self.w)

    def forward(self, x):
        return x + self.get_bias().unsqueeze(0)


class AttnV2(Attn):
    def define_table(self, heads):
        self.table = nn.Parameter(torch.randn((2 * self.w - 1) ** 2, heads) * 2.0)

    def forward(self, x):
        return x * torch.sigmoid(self.get_bias()).unsqueeze(0)


class Both(nn.Module):
    def __init__(self):
        super().__init__()
        self.one = Attn()
        self.two = AttnV2()

    def forward(self, x):
        return self.two(self.one(x))
'''


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    return port(tmp_path_factory.mktemp("registered"), textwrap.dedent(SOURCE), input_specs=("2,9,9",))


@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_tensors_registered_in_helper_methods_match_torch(both, batch, seed):
    assert_same_outputs(both, [random_input(seed, (batch, 2, 9, 9))], tolerance=1e-6, what="relative positions")
    text = both.keras_module.__loader__.get_source(both.keras_module.__name__)
    assert "index_select_first(table, index)" in text
