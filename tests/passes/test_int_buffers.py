"""An integer buffer of a dtype porter cannot read off its construction (TabTransformer's `categories_offset =
torch.tensor([0, *categories[:-1]]).cumsum(-1)`) added to integer inputs: the inputs were cast to float32 (the
buffer's dtype unknown, taken for a float), and TensorFlow refused float32 + int64. An attribute tensor of unknown
dtype now meets an integer tensor promoted as torch promotes, by the dtypes at run time. Matches torch on drawn
category ids."""

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port

SOURCE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, categories=(3, 4, 5), dim=8):
        super().__init__()
        self.register_buffer("offset", torch.tensor([0, *categories[:-1]]).cumsum(-1))
        self.register_buffer("scale", torch.linspace(0.5, 1.5, dim))
        self.embed = nn.Embedding(sum(categories), dim)

    def forward(self, x):
        return self.embed(x + self.offset) * (x[..., None] + 1) * self.scale
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("int_buffer"), textwrap.dedent(SOURCE), input_specs=("3:int64:0:3",))


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3))
def test_integer_buffer_offsets_match_torch(pair, seed, batch):
    ids = np.random.default_rng(seed).integers(0, 3, (batch, 3)).astype(np.int64)
    assert_same_outputs(pair, [ids], tolerance=1e-6)
