"""Indexing with one literal list (`x[:, [-1], :]` as nanoGPT keeps the last position, `x[:, [0, 2]]`) against
torch: the list's axis stays in place, negative entries count from the end, ints and None around it."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

MODEL = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        y = self.fc(x)
        return {op}
'''

OPS = {
    "last_position": "y[:, [-1], :]",
    "two_features": "y[:, :, [0, 2]] * 2.0",
    "with_int": "y[0, [1, -2]]",
    "with_none": "y[:, None, [0, -1]]",
    "repeated": "y[:, [2, 2, 0]]",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    sources = {name: textwrap.dedent(MODEL).replace("{op}", op) for name, op in OPS.items()}
    return cached(lambda name: port(tmp_path_factory.mktemp(name), sources[name], input_specs=("4,6",)))


@pytest.mark.parametrize("name", sorted(OPS))
@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_list_index_matches_torch(ported, name, batch, seed):
    assert_same_outputs(ported(name), [random_input(seed, (batch, 4, 6))], tolerance=1e-6, what=OPS[name])


@pytest.mark.parametrize("name", sorted(OPS))
def test_list_index_compiles_with_xla(ported, name):
    assert_same_outputs(ported(name), [random_input(1, (2, 4, 6))], tolerance=1e-6, what=OPS[name], jit=True)
