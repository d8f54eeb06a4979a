"""`Tensor.split` given its sizes by keyword, `x.split(split_size=[d, d], dim=-1)` (a Mamba block's `in_proj`
output into x and res): the keyword was dropped, and the port called `split(x, -1)` (a crash). Sizes as a list and
as one int, by keyword and by position, match torch for drawn sizes."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.d = d
        self.in_proj = nn.Linear(d, 3 * d)

    def forward(self, x):
        (a, res) = self.in_proj(x)[..., :2 * self.d].split(split_size=[self.d, self.d], dim=-1)
        b, c, e = self.in_proj(x).split(split_size=self.d, dim=2)
        f, g = x.split([2, self.d - 2], -1)
        return a * res + b - c * e + f.sum(-1, keepdim=True) * g.mean()
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("split_keyword"), textwrap.dedent(SOURCE), input_specs=("5,6",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), length=st.integers(1, 7))
def test_split_by_keyword_matches_torch(pair, seed, batch, length):
    assert_same_outputs(pair, [random_input(seed, (batch, length, 6))])
