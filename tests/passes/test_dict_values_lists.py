"""A list of a dict's values handed to a block (an FPN's `self.top_down(list(feats.values()))` with `feats = {}`
filled by key): porter could not type the dict, so the block took its argument for a tensor, and its `len(x)`
became `dim_size(x, 0)` (the port raised on the list at run time, after converting with exit 0). `list(d.values())`
of such a dict is now a list of tensors in torch's layout (what its items are stored in): the block's `len`, indexing
and loop read a list, and the port matches torch."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class TopDown(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.smooth = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        last = x[-1]
        for idx in range(len(x) - 2, -1, -1):
            last = x[idx] + F.interpolate(last, size=x[idx].shape[-2:], mode="nearest")
        return self.smooth(last)


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 6, 3, 2, 1)
        self.c2 = nn.Conv2d(6, 6, 3, 2, 1)
        self.td = TopDown(6)
        self.head = nn.Conv2d(6, 4, 1)

    def forward(self, x):
        feats = {}
        feats["a"] = self.c1(x)
        feats["b"] = self.c2(feats["a"])
        return self.head(self.td(list(feats.values())))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("dict_values_lists"), textwrap.dedent(SOURCE), input_specs=("3,16,16",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), size=st.integers(5, 19))
def test_port_matches_torch(pair, seed, batch, size):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, size, size))])
