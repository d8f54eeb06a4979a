"""YOLOv5's Detect head, in three parts: `self.grid = [torch.zeros(1)] * nl` (a list repeated: its items were
untyped, so a grid in torch's order met the detections held permuted: a crash), `return x if self.training else
(torch.cat(z, 1), x)` (a list on one side, a pair on the other: the port took the list for both, and the caller
unpacked the wrong structure: a crash), and a caller returning the head's pair (`return self.head([a, b])`: each
item read through the call, so the head ran once per item). A repeated list keeps its items' template; a
conditional expression whose sides differ in structure gives an untyped value in torch's layout; a returned call's
items are read from one call. Compared with torch for hypothesis-drawn sizes, batch 1 included."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Detect(nn.Module):
    def __init__(self, na=3, no=6, ch=(4, 8)):
        super().__init__()
        self.na, self.no, self.nl = na, no, len(ch)
        self.grid = [torch.zeros(1)] * self.nl
        self.m = nn.ModuleList(nn.Conv2d(c, na * no, 1) for c in ch)

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:
                yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing="ij")
                self.grid[i] = torch.stack((xv, yv), 2).view(1, 1, ny, nx, 2).float()
                y = x[i].sigmoid()
                xy = y[..., 0:2] * 2 - 0.5 + self.grid[i]
                z.append(torch.cat((xy, y[..., 2:]), -1).view(bs, -1, self.no))
        return x if self.training else (torch.cat(z, 1), x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3, padding=1)
        self.c2 = nn.Conv2d(4, 8, 3, stride=2, padding=1)
        self.head = Detect()

    def forward(self, x):
        a = self.c1(x)
        b = self.c2(a)
        return self.head([a, b])
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {"detect": SOURCE})


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 2), height=st.integers(3, 13), width=st.integers(3, 13), seed=st.integers(0, 2**16))
def test_a_detect_head_matches_torch(ported, batch, height, width, seed):
    pair = ported("detect")
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pair, [x], tolerance=1e-4)


def test_the_head_runs_once(ported):
    code = (ported("detect").out_dir / "op_model_keras.py").read_text()
    call = code[code.index("class Net"):]
    assert call.count("self.head(") == 1
