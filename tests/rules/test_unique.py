"""Property tests of `torch.unique` / `Tensor.unique` (porter/rules/selection_ops.py, runtime unique_ops.py) against
real torch, eagerly (its size depends on the values: no XLA, as in torch.compile): flattened and along a dim
(first, middle, last, negative), inverse indices and counts, int and bool inputs, `sorted=False` (torch sorts on the
CPU all the same), on a Conv1d's output rounded so that values repeat; and in a constructor, RegNet's way (timm's
`generate_regnet` counts its stages as `len(torch.unique(widths))`)."""

import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, port_cache, random_input

TEMPLATE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 4, 3, padding=1)

    def forward(self, x):
        r = torch.round(self.conv(x) * 2)
        {op}
'''

OPS = {
    "flat": "return torch.unique(r)",
    "flat_method_unsorted": "return r.unique(sorted=False) * 3",
    "inverse_and_counts": "v, i, c = torch.unique(r, return_inverse=True, return_counts=True)\n"
                          "        return torch.cat([v, i.flatten().float(), c.float()])",
    "counts_only": "v, c = r.unique(return_counts=True)\n        return v * c",
    "rows_dim0_inverse": "v, i = torch.unique(r.clamp(-1, 1)[:, :2, :2], dim=0, return_inverse=True)\n"
                         "        return torch.cat([v.flatten(), i.float()])",
    "channels_dim1_counts": "v, c = torch.unique(r.clamp(-1, 1)[:, :, :2], dim=1, return_counts=True)\n"
                            "        return torch.cat([v.flatten(), c.float()])",
    "last_dim_negative": "return torch.unique(r.clamp(-1, 1)[:1], dim=-1).flatten()",
    "long": "return torch.unique(r.long()).float()",
    "bool": "return torch.unique(r > 0).float()",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    sources = {name: textwrap.dedent(TEMPLATE).replace("{op}", op) for name, op in OPS.items()}
    return port_cache(tmp_path_factory, sources, input_specs=("3,7",))


@pytest.mark.parametrize("name", sorted(OPS))
@given(batch=st.integers(1, 3), length=st.sampled_from([1, 2, 5, 8]), seed=st.integers(0, 2**16))
def test_unique_matches_torch(ported, name, batch, length, seed):
    x = random_input(seed, (batch, 3, length))
    assert_same_outputs(ported(name), [x], tolerance=1e-6, what=f"{name} x{x.shape}")


STAGES = '''
import math

import torch
import torch.nn as nn


def stage_widths(slope, initial, mult, depth, quant=8):
    widths_cont = torch.arange(depth, dtype=torch.float32) * slope + initial
    exps = torch.round(torch.log(widths_cont / initial) / math.log(mult))
    widths = torch.round((initial * torch.pow(mult, exps)) / quant) * quant
    return widths.int().tolist(), len(torch.unique(widths))


class Stages(nn.Module):
    def __init__(self, slope=12.0, initial=16, mult=2.0, depth=6):
        super().__init__()
        widths, num_stages = stage_widths(slope, initial, mult, depth)
        self.num_stages = num_stages
        stages, previous = [], 3
        for width in sorted(set(widths)):
            stages.append(nn.Conv2d(previous, width, 3, padding=1))
            previous = width
        self.stages = nn.Sequential(*stages)

    def forward(self, x):
        return self.stages(x) * self.num_stages
'''


def test_unique_in_a_constructor_counts_stages(tmp_path):
    pair = port(tmp_path, textwrap.dedent(STAGES), input_specs=("3,5,5",))
    x = random_input(0, (1, 3, 5, 5))
    assert_same_outputs(pair, [x], tolerance=1e-5, what="stages")
    assert_same_outputs(pair, [x], tolerance=1e-5, what="stages jit", jit=True)
