"""A block handed a dict of features (an FPN neck's `forward(self, x)` with `names = list(x.keys())`, `x =
list(x.values())`, returning `OrderedDict([(k, m(v)) for k, m, v in zip(names, self.inner, x)])`): the parameter
was taken for a tensor, whose `.keys()` / `.values()` became stubs that raised (exit 1). No tensor has those
methods: they are the dict's, its tensors in torch's order as a dict's are, and a comprehension's tuples hand
their tensors in torch's order too. The port matches torch."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
from collections import OrderedDict

import torch.nn as nn


class Neck(nn.Module):
    def __init__(self, chans, out):
        super().__init__()
        self.inner = nn.ModuleList([nn.Conv2d(c, out, 1) for c in chans])

    def forward(self, x):
        names = list(x.keys())
        x = list(x.values())
        return OrderedDict([(k, m(v)) for k, m, v in zip(names, self.inner, x)])


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 6, 3, 2, 1)
        self.c2 = nn.Conv2d(6, 8, 3, 2, 1)
        self.neck = Neck([6, 8], 4)

    def forward(self, x):
        feats = OrderedDict()
        feats["a"] = self.c1(x)
        feats["b"] = self.c2(feats["a"])
        out = self.neck(feats)
        return out["a"].mean((2, 3)) + out["b"][:, :, :1].mean((2, 3)) + out["b"].amax(2).sum(-1)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("dict_arguments"), textwrap.dedent(SOURCE), input_specs=("3,16,12",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), height=st.integers(5, 17), width=st.integers(5, 17))
def test_port_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])
