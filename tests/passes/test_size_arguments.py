"""A tensor's whole `size()` / `shape` handed to a layer or block (`self.up(y, output_size=x.size())` of a
ConvTranspose2d, LinkNet's `self.decoders[i](y, skips[i].size())`, a block reading `size[2:]`): the call was
handed the tensor itself (`output_size=x`), a crash when the port ran (`int()` of an array) though porter reported
it converted. The sizes torch reports are handed now (`torch_size(x, channels_last=True)`), as a helper function
was handed them. Compared with torch for hypothesis-drawn odd sizes, stride 2 with padding, batch 1 included."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

SOURCE = '''
import torch.nn as nn
import torch.nn.functional as F


class Resize(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(8, 3, 1)

    def forward(self, x, size):
        return F.interpolate(self.c(x), size=size[2:], mode="nearest")


class Up(nn.Module):
    def __init__(self):
        super().__init__()
        self.tp = nn.ConvTranspose2d(8, 3, 3, 2, 1)

    def forward(self, x, output_size):
        return self.tp(x, output_size=output_size)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 8, 3, 2, 1)
        self.tp = nn.ConvTranspose2d(8, 3, 3, 2, 1)
        self.up = Up()
        self.resize = Resize()

    def forward(self, x):
        y = self.down(x)
        return self.tp(y, output_size=x.size()) + self.up(y, x.shape) + self.resize(y, x.size())
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {"sizes": SOURCE})


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), height=st.integers(2, 13), width=st.integers(2, 13), seed=st.integers(0, 2**16))
def test_whole_sizes_handed_to_layers_and_blocks_match_torch(ported, batch, height, width, seed):
    pair = ported("sizes")
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
