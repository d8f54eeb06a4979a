"""A literal slice of an ordered container (`self.features[:2](x)`, then `self.features[2:](f)`): the children it
keeps, in order. The slice stood for the whole container, so the channel count of a flatten after it read
`self.features[2:][2].out_channels` (the whole container's third child, indexed in the slice: an IndexError in
`load_state_dict`, or an attribute error at the first call). The port matches torch on drawn batches."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(),
            nn.Conv2d(8, 16, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.fc = nn.Linear(16 * 2 * 2, 10)
        self.aux = nn.Linear(8 * 3 * 3, 10)

    def forward(self, x):
        f = self.features[:2](x)
        g = self.features[2:-1](f)
        aux = self.aux(torch.flatten(nn.functional.adaptive_max_pool2d(f, 3), 1))
        return self.fc(torch.flatten(self.features[-1:](g), 1)) + aux
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("slices"), textwrap.dedent(SOURCE), input_specs=("3,16,16",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), size=st.sampled_from([12, 16, 19]))
def test_sliced_container_matches_torch(pair, seed, batch, size):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, size, size))])
