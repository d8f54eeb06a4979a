"""A loop body reading, on a later turn, a name no statement before the loop binds (ESPNet's `for i, layer in
enumerate(self.level2): if i == 0: output1 = layer(output0) else: output1 = layer(output1)`): the first
translation took the unbound name for an untyped tensor in torch's layout and converted the image the earlier turn
had left channels-last again, a silent mismatch (a wrong answer on square images, height and width swapped on
others). The body is now translated again with the name entering as the image the body leaves (statements.py
`images_from_earlier_turns`): it matches torch on square and non-square inputs, converting at the boundary only."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 2, 1)
        self.level2 = nn.ModuleList([nn.Conv2d(8, 8, 3, 1, 1) for _ in range(3)])
        self.head = nn.Conv2d(16, 5, 1)

    def forward(self, x):
        output0 = self.stem(x)
        for i, layer in enumerate(self.level2):
            if i == 0:
                output1 = layer(output0)
            else:
                output1 = layer(output1)
        return self.head(torch.cat([output0, output1], 1))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("earlier_turns"), textwrap.dedent(SOURCE), input_specs=("3,16,24",))


def test_the_loop_converts_nothing(pair):
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 16, 24))) == 2


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.integers(5, 17), width=st.integers(5, 17))
def test_port_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])
