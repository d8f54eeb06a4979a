"""A module class handed to a constructor as a name bound to something porter cannot see (GC ViT's
`norm_layer_cl = partial(get_norm_layer("layernorm"), eps=...)`, a registry lookup by string) is not taken to be the
parameter's default class: the blocks were laid out for a channels-first LayerNorm2d default while a LayerNorm over
the last dim ran, and the port raised. Such a norm is one porter cannot type (run through `call_module`); a
parameter handed on from a helper's own parameter keeps the default's kind, as before."""

from pathlib import Path

import pytest

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.harness import PortedPair
from tests.rules.op_ports import assert_same_outputs

SOURCE = '''
from functools import partial

import torch
import torch.nn as nn


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


NORMS = {"layernorm": nn.LayerNorm, "layernorm2d": LayerNorm2d}


def get_norm(name):
    return NORMS.get(name)


class Block(nn.Module):
    def __init__(self, dim, norm_layer=LayerNorm2d):
        super().__init__()
        self.norm = norm_layer(dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):  # x: (B, H, W, C) in torch
        return x + self.fc(self.norm(x))


class Stage(nn.Module):
    def __init__(self, dim, depth, norm_layer_cl=LayerNorm2d):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, STRIDE, 1)
        self.blocks = nn.ModuleList([Block(dim, norm_layer=norm_layer_cl) for _ in range(depth)])

    def forward(self, x):
        x = self.conv(x).permute(0, 2, 3, 1)
        for blk in self.blocks:
            x = blk(x)
        return x.permute(0, 3, 1, 2)


class Net(nn.Module):
    def __init__(self, norm="layernorm", dim=6):
        super().__init__()
        norm_cl = partial(get_norm(norm), eps=1e-5)
        self.stem = nn.Conv2d(3, dim, 3, 2, 1)
        self.stage = Stage(dim, 2, norm_layer_cl=norm_cl)
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        return self.head(self.stage(self.stem(x)).mean((2, 3)))
'''


@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("size", [9, 16])
def test_a_norm_looked_up_at_run_time_is_not_the_default(tmp_path, stride, size):
    source = tmp_path / "net.py"
    source.write_text(SOURCE.replace("STRIDE", str(stride)))
    conversion = convert(ConvertOptions(source, tmp_path / "out", class_name="Net", input_specs=[f"3,{size},{size}"]))
    assert conversion.exit_code == 0, conversion.manifest
    write_tree(tmp_path / "out", conversion.files)
    pair = PortedPair(tmp_path / "out", seed=3)
    for batch in (1, 2):
        inputs = pair.example_inputs(batch=batch, seed=batch)
        assert_same_outputs(pair, inputs, tolerance=1e-5)
        assert_same_outputs(pair, inputs, tolerance=1e-5, jit=True)
