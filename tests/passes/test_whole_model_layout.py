"""Whole-model layout: constructs that used to convert at run time inside a convnet trace only the boundary's
Transposes now, and the port still matches torch eagerly and under XLA.

Each snippet is the construct as held-out model code writes it (pretrainedmodels' DPN and PNASNet, GluonCV's NASNet,
vit-pytorch's ScalableViT), cut down to a few layers.
"""

import pytest

from porter.verify.harness import count_transposes
from porter.verify.torch_moves import count_torch_data_moves
from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

HEADER = '''
import torch
import torch.nn as nn
'''

BLOCKS = '''

class ConvBn(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride, 1)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return self.bn(self.conv(x))


class Reduce(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.pool = nn.AvgPool2d(1, stride=2)
        self.conv = nn.Conv2d(cin, cout, 1)

    def forward(self, x):
        return self.conv(self.pool(torch.relu(x)))
'''

SOURCES = {
    # PNASNet's Cell: `conv_prev_1x1` is a FactorizedReduction or a ReluConvBn, chosen by an if/else in __init__
    "either_block": HEADER + BLOCKS + '''

class Cell(nn.Module):
    def __init__(self, cin, cout, reduce):
        super().__init__()
        if reduce:
            self.prev = Reduce(cin, cout)
        else:
            self.prev = ConvBn(cin, cout, stride=2)
        self.out = nn.Conv2d(cout, cout, 1)

    def forward(self, x):
        y = self.prev(x)
        return self.out(y)[:, :2] + y[:, 1:3]


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.a = Cell(4, 6, True)
        self.b = Cell(2, 6, False)

    def forward(self, x):
        return self.b(self.a(self.stem(x))).mean([2, 3])
''',
    # NASNet's cells return (x, x_prev), DPN's blocks (resid, dense): the next cell takes the pair
    "tuple_cells": HEADER + BLOCKS + '''

class Cell(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.left = ConvBn(channels, channels)
        self.right = nn.Conv2d(channels, channels, 1)

    def forward(self, x, x_prev):
        out = torch.cat([self.left(x), self.right(x_prev)], dim=1)[:, ::2]
        return out, x


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.cells = nn.ModuleList([Cell(4) for _ in range(3)])

    def forward(self, x):
        x = self.stem(x)
        x_prev = x
        for cell in self.cells:
            x, x_prev = cell(x, x_prev)
        return torch.flatten(x + x_prev, 1)
''',
    # scalable_vit / twins_svt: attention over a conv feature map (heads split off `b (h d) ...`, folded back into an
    # image a conv reads), an optional block (`Block() if first else None`) and a block-or-Identity choice
    "attention_on_conv_map": HEADER + "from einops import rearrange\n" + BLOCKS + '''

class Attention(nn.Module):
    def __init__(self, dim, heads=2):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Conv2d(dim, dim * 3, 1, bias=False)
        self.to_out = nn.Conv2d(dim, dim, 1)

    def forward(self, x):
        height, width = x.shape[-2:]
        q, k, v = self.to_qkv(x).chunk(3, dim=1)
        q, k, v = map(lambda t: rearrange(t, 'b (h d) ... -> b h (...) d', h=self.heads), (q, k, v))
        attn = torch.matmul(q, k.transpose(-1, -2)).softmax(dim=-1)
        out = rearrange(torch.matmul(attn, v), 'b h (x y) d -> b (h d) x y', x=height, y=width)
        return self.to_out(out)


class OpModel(nn.Module):
    def __init__(self, first_extra=True):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.blocks = nn.ModuleList([nn.ModuleList([Attention(4), ConvBn(4, 4) if i == 0 else None])
                                     for i in range(2)])
        self.last = ConvBn(4, 4) if first_extra else nn.Identity()

    def forward(self, x):
        x = self.stem(x)
        for attn, extra in self.blocks:
            x = attn(x) + x
            if extra is not None:
                x = extra(x)
        return self.last(x).mean([2, 3])
''',
}
# constructs whose torch code moves data itself (attention heads): the port may add the boundary's 2 Transposes
MOVES_DATA_ITSELF = {"attention_on_conv_map"}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, SOURCES)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_construct_matches_torch_and_converts_only_at_the_boundary(ported, name):
    pair = ported(name)
    x = random_input(0, (2, 3, 8, 8))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
    own = count_torch_data_moves(pair.torch_model, [x]) if name in MOVES_DATA_ITSELF else 0
    assert count_transposes(pair.keras_model, [x]) <= own + 2
