"""A list attribute of tensors refilled in `forward` (YOLOv5's Detect: `self.grid = [torch.empty(0) for _ in
range(nl)]`, then `self.grid[i], self.anchor_grid[i] = self._make_grid(nx, ny, i)` and `xy * 2 + self.grid[i]`):
the list was taken for a list of modules porter could not type, so its items met the 5-d predictions held in
another order unconverted: a shape error, or, where the anchors, rows and columns have one size (3 anchors on a
3x3 level), a silently wrong result. Its items are now tensors in torch's order, brought to the predictions' order.
Matches torch on drawn batches and sizes, the coinciding sizes included."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Detect(nn.Module):
    def __init__(self, nc=2, anchors=((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119)), ch=(8, 16)):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.grid = [torch.empty(0) for _ in range(self.nl)]
        self.anchor_grid = [torch.empty(0) for _ in range(self.nl)]
        self.register_buffer("anchors", torch.tensor(anchors).float().view(self.nl, -1, 2))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)
        self.stride = [8.0, 16.0]

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            self.grid[i], self.anchor_grid[i] = self._make_grid(nx, ny, i)
            xy, wh, conf = x[i].sigmoid().split((2, 2, self.nc + 1), 4)
            xy = (xy * 2 + self.grid[i]) * self.stride[i]
            wh = (wh * 2) ** 2 * self.anchor_grid[i]
            y = torch.cat((xy, wh, conf), 4)
            z.append(y.view(bs, self.na * nx * ny, self.no))
        return torch.cat(z, 1)

    def _make_grid(self, nx=20, ny=20, i=0):
        t = self.anchors[i].dtype
        shape = 1, self.na, ny, nx, 2
        y, x = torch.arange(ny, dtype=t), torch.arange(nx, dtype=t)
        yv, xv = torch.meshgrid(y, x, indexing="ij")
        grid = torch.stack((xv, yv), 2).expand(shape) - 0.5
        anchor_grid = (self.anchors[i] * self.stride[i]).view((1, self.na, 1, 1, 2)).expand(shape)
        return grid, anchor_grid


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.c2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.detect = Detect()

    def forward(self, x):
        a = self.c1(x)
        b = self.c2(a)
        return self.detect([a, b])
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("yolo"), textwrap.dedent(SOURCE), input_specs=("3,12,12",))


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), size=st.sampled_from([12, 16, 20]))
def test_detect_head_matches_torch(pair, seed, batch, size):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, size, size))])  # (12: a 3x3 level for 3 anchors)


def test_detect_head_compiles_with_xla(pair):
    assert_same_outputs(pair, [random_input(0, (2, 3, 12, 12))], jit=True)
