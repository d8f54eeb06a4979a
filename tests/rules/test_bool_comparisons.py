"""Comparisons of a bool mask with a number through the tensor methods (ESPnet's `scores.masked_fill(mask.eq(0),
-1e4)` with `mask = torch.ones(..., dtype=torch.bool)`): torch counts True as 1; TensorFlow would not compare a
bool tensor with 0 (the port raised "Cannot convert 0 to EagerTensor of dtype bool"). `.eq`, `.ne`, `torch.eq`
now promote as the `==` operator does, and `torch.ones(..., dtype=torch.bool)` is known to be bool. Each matches
torch for drawn sizes, batch 1 included."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        mask = torch.ones(x.size(0), 1, x.size(1), dtype=torch.bool)
        mask[:, :, -2:] = False
        scores = self.lin(x) @ x.transpose(1, 2)
        kept = scores.masked_fill(mask.eq(0), -1e4).softmax(-1)
        dropped = scores.masked_fill(torch.eq(mask, 1), 0.0) + mask.ne(0).float()
        return kept + dropped
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("bool_comparisons"), textwrap.dedent(SOURCE), input_specs=("7,8",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), length=st.integers(3, 9))
def test_bool_mask_comparisons_match_torch(pair, seed, batch, length):
    assert_same_outputs(pair, [random_input(seed, (batch, length, 8))])
