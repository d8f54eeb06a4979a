"""Coordinate maps built from an image's sizes and cat'ed with it (CoordConv's AddCoords: `torch.arange(w).repeat(1,
h, 1)`, transposes, a batch repeat, a radius map from both; a `linspace` given size-1 dims and expanded): values that differ along one dim and are copies along
the rest (porter/ir/varying.py). Brought to the layout the image holds by broadcasting their copies in that order
(runtime `permute_broadcast`), they trace no Transpose, so the block runs channels-last and the net converts on entry
only (the held-out CoordConv net traced 9 Transposes before). Sizes drawn by hypothesis (batch 1, odd sizes); both
models are built with them and compared eagerly and under XLA."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

SOURCE = '''
import torch
import torch.nn as nn


class AddCoords(nn.Module):
    def __init__(self, with_r=False):
        super().__init__()
        self.with_r = with_r

    def forward(self, input_tensor):
        batch_size, _, x_dim, y_dim = input_tensor.size()
        xx_channel = torch.arange(x_dim).repeat(1, y_dim, 1)
        yy_channel = torch.arange(y_dim).repeat(1, x_dim, 1).transpose(1, 2)
        xx_channel = xx_channel.float() / (x_dim - 1)
        yy_channel = yy_channel.float() / (y_dim - 1)
        xx_channel = xx_channel * 2 - 1
        yy_channel = yy_channel * 2 - 1
        xx_channel = xx_channel.repeat(batch_size, 1, 1, 1).transpose(2, 3)
        yy_channel = yy_channel.repeat(batch_size, 1, 1, 1).transpose(2, 3)
        ret = torch.cat([input_tensor, xx_channel.type_as(input_tensor), yy_channel.type_as(input_tensor)], dim=1)
        if self.with_r:
            rr = torch.sqrt(torch.pow(xx_channel.type_as(input_tensor) - 0.5, 2)
                            + torch.pow(yy_channel.type_as(input_tensor) - 0.5, 2))
            ret = torch.cat([ret, rr], dim=1)
        return ret


class Ramp(nn.Module):
    def forward(self, x):
        n, _, h, w = x.shape
        ramp = torch.arange(w).float().unsqueeze(0).expand(h, w).permute(1, 0) / w
        return torch.cat([x, ramp.expand(n, 1, w, h).transpose(2, 3)], dim=1)


class Grid(nn.Module):
    def forward(self, x):
        n, _, h, w = x.shape
        xs = torch.linspace(-1, 1, w).view(1, 1, 1, w).expand(n, 1, h, w)
        ys = torch.linspace(-1, 1, h).view(1, 1, h, 1).expand(n, 1, h, w)
        return torch.cat([x, xs, ys * xs + torch.ones(n, 1, h, w)], dim=1)


def coordinates(how, with_r):
    return AddCoords(with_r=with_r) if how == "coordconv" else Ramp() if how == "ramp" else Grid()


class Net(nn.Module):
    def __init__(self, how="coordconv"):
        super().__init__()
        added = {"coordconv": 3, "ramp": 1, "linspace": 2}[how]
        self.coords = coordinates(how, True)
        self.conv = nn.Conv2d(3 + added, 4, 3, padding=1)
        self.coords2 = coordinates(how, False)
        self.conv2 = nn.Conv2d(4 + min(added, 2), 5, 1)

    def forward(self, x):
        x = torch.relu(self.conv(self.coords(x)))
        return self.conv2(self.coords2(x))
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    ports = snippet_ports(tmp_path_factory, SOURCE, "3,5,7", "how")
    return lambda how: PortedPair(ports(how), seed=1)


@pytest.mark.parametrize("how", ["coordconv", "ramp", "linspace"])
@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 2), height=st.sampled_from([2, 3, 6]), width=st.sampled_from([2, 5, 7]),
       seed=st.integers(0, 2**16))
def test_coordinate_maps_match_torch_converting_on_entry_only(ported, how, batch, height, width, seed):
    pair, x = ported(how), random_input(seed, (batch, 3, height, width))
    assert_matches_converting_at_the_boundary(pair, x)
