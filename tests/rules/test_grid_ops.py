"""Property tests of the `torch.meshgrid` rule (porter/rules/grid_ops.py) against real torch: 1-D inputs cut from
a Conv2d's channels-last output (their sizes follow the drawn input shape, 1 included), two and three inputs,
spelled out or in a list, indexing "ij", "xy" and torch's default; and an end-to-end CoordConv."""

import textwrap

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, conv_model, port, port_cache, random_input

# h, w, c, b: 1-D tensors of the input's height, width, the conv's 6 channels and the batch size
VECTORS = "h, w, c, b = y[0, 0, :, 0], y[0, 0, 0, :], y[0, :, 0, 0], y[:, 0, 0, 0]\n        "
OPS = {
    "ij_default": "gh, gw = torch.meshgrid(h, w)\n        y = gh * 2.0 + gw",
    "ij_list": "gh, gw = torch.meshgrid([h, w], indexing='ij')\n        y = torch.stack([gh, gw], dim=0)",
    "xy_pair": "gx, gy = torch.meshgrid(w, h, indexing='xy')\n        y = gx - 3.0 * gy",
    "xy_three": "y = torch.stack(torch.meshgrid(h, w, c, indexing='xy'), dim=-1)",
    "ij_three_tuple": "grids = torch.meshgrid((b, h, w), indexing='ij')\n        y = grids[0] + grids[1] * grids[2]",
    "single": "(g,) = torch.meshgrid(c, indexing='ij')\n        y = g",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {name: conv_model(VECTORS + op) for name, op in OPS.items()})


@pytest.mark.parametrize("name", sorted(OPS))
@given(batch=st.integers(1, 3), height=st.sampled_from([1, 2, 5, 8]), width=st.sampled_from([1, 3, 4, 7]),
       seed=st.integers(0, 2**16))
def test_meshgrid_matches_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], tolerance=1e-6, what=f"{name} x{x.shape}")


COORD_CONV = '''
import torch
import torch.nn as nn


class CoordConv(nn.Module):
    """CoordConv: two channels of normalised (y, x) coordinates appended to the input before a convolution."""

    def __init__(self, channels=3, out_channels=5):
        super().__init__()
        self.conv = nn.Conv2d(channels + 2, out_channels, 3, padding=1)

    def forward(self, x):
        n, _, h, w = x.shape
        ys = torch.linspace(-1.0, 1.0, h)
        xs = torch.linspace(-1.0, 1.0, w)
        grid_y, grid_x = torch.meshgrid(ys, xs, indexing="ij")
        grid = torch.stack([grid_y, grid_x]).unsqueeze(0).expand(n, -1, -1, -1)
        return torch.relu(self.conv(torch.cat([x, grid], dim=1)))
'''


@pytest.fixture(scope="module")
def coord_conv(tmp_path_factory):
    return port(tmp_path_factory.mktemp("coord_conv"), textwrap.dedent(COORD_CONV))


@given(batch=st.integers(1, 3), height=st.sampled_from([2, 5, 8]), width=st.sampled_from([3, 4, 7]),
       seed=st.integers(0, 2**16))
def test_coord_conv_end_to_end(coord_conv, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(coord_conv, [x], tolerance=1e-5, what=f"coord_conv x{x.shape}")


torch.set_num_threads(1)
