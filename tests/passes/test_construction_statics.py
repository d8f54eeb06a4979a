"""A block whose `forward` branches on flags its `__init__` derives from a literal constructor argument (DPN's
DualPathBlock: `block_type='proj'|'down'|'normal'` sets `self.has_proj` and `self.key_stride`), chained in a
Sequential that hands the first block an image and the others the (resid, dense) pair it returns.

Given a tensor, `forward` binds x_s1/x_s2 to slices of a conv output on the `has_proj` path and to `x[0]`/`x[1]` on
the other: read generically, the two meet in no common layout and both went back to torch's order. The flag is
constant per construction, so `call` is specialised per construction (the `__init__` read with that construction's
literal arguments, `passes/init_statics.py`): the block given the image takes the projection path only, and the
port converts at its boundary alone. The port matches torch (eager and XLA) for hypothesis-drawn widths and sizes.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.passes.init_statics import decided_attributes
from porter.verify.harness import PortedPair
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, port_cache, random_input

SOURCE = '''
import torch
import torch.nn as nn


class DualBlock(nn.Module):
    def __init__(self, in_chs, c, inc, block_type="normal"):
        super().__init__()
        self.c = c
        if block_type == "proj":
            self.key_stride = 1
            self.has_proj = True
        elif block_type in ("down",):
            self.key_stride = 2
            self.has_proj = True
        else:
            assert block_type == "normal"
            self.key_stride = 1
            self.has_proj = False
        if self.has_proj:
            self.proj = nn.Sequential(nn.BatchNorm2d(in_chs), nn.Conv2d(in_chs, c + 2 * inc, 1, stride=self.key_stride))
        self.body = nn.Sequential(nn.BatchNorm2d(in_chs), nn.ReLU(),
                                  nn.Conv2d(in_chs, c + inc, 3, stride=self.key_stride, padding=1))

    def forward(self, x):
        x_in = torch.cat(x, dim=1) if isinstance(x, tuple) else x
        if self.has_proj:
            x_s = self.proj(x_in)
            x_s1 = x_s[:, :self.c, :, :]
            x_s2 = x_s[:, self.c:, :, :]
        else:
            x_s1 = x[0]
            x_s2 = x[1]
        out = self.body(x_in)
        resid = x_s1 + out[:, :self.c, :, :]
        dense = torch.cat([x_s2, out[:, self.c:, :, :]], dim=1)
        return resid, dense


class Net(nn.Module):
    def __init__(self, width=4, inc=2):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1),
            DualBlock(width, width, inc, "proj"),
            DualBlock(width + 3 * inc, width, inc, "normal"),
            DualBlock(width + 4 * inc, width, inc, "down"),
            DualBlock(width + 3 * inc, width, inc),
        )
        self.head = nn.Conv2d(width + 4 * inc, 5, 1)

    def forward(self, x):
        x = self.features(x)
        x = torch.cat(x, dim=1) if isinstance(x, tuple) else x
        return self.head(x)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {"dual": SOURCE})


@settings(max_examples=3, deadline=None)
@given(width=st.integers(1, 5), inc=st.integers(1, 3), batch=st.integers(1, 2), size=st.integers(3, 9),
       seed=st.integers(0, 2**16))
def test_a_block_branching_on_its_init_flags_matches_torch_and_converts_only_at_the_boundary(ported, width, inc,
                                                                                             batch, size, seed):
    pair = PortedPair(ported("dual").out_dir, init_args={"width": width, "inc": inc}, seed=seed)
    x = random_input(seed, (batch, 3, size, size))
    assert_matches_converting_at_the_boundary(pair, x)


def test_the_block_given_the_image_runs_the_projection_path_alone(ported):
    code = (ported("dual").out_dir / "op_model_keras.py").read_text()
    assert "if self.has_proj == True:" in code  # (the other blocks are handed tuples: the tuple case serves them)
    case = code.split("if self.has_proj == True:")[1].split("return")[0]
    assert "x_s = self.proj(x_in" in case and "x[0]" not in case and "to_channels" not in case
    assert "if self.has_proj == False:" not in code


def _init(source):
    import libcst as cst

    module = cst.parse_module(source)
    return module, module.body[0]


@pytest.mark.parametrize(("bound", "expected"), [
    ({"kind": "a", "n": 2}, {"flag": True, "stride": 4, "pair": (2, "a"), "chained": True}),
    ({"kind": "b", "n": 2}, {"flag": False, "stride": 1, "pair": (2, "b"), "chained": False}),
    ({"kind": "a"}, {"flag": True}),  # n unknown: what it decides stays unknown
    ({"kind": "b"}, {"flag": False, "stride": 1}),
    ({}, {}),
])
def test_init_attributes_follow_the_branches_literal_arguments_decide(bound, expected):
    module, init = _init('''
def __init__(self, kind, n, other):
    self.flag = kind is "a"
    if self.flag and n is not None:
        self.stride = n * 2
    elif kind == "b":
        self.stride = 1
    else:
        self.stride = n * 2
    self.pair = (n, kind)
    self.chained = 0 < (n or 0) < 3 and not kind == "b"
    self.other = other
    for i in range(2):
        self.flag2 = i
    if other:
        self.maybe = 1
    else:
        self.maybe = 2
''')
    found = decided_attributes(init, bound, lambda node: module.code_for_node(node))
    assert found == expected
