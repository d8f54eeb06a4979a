"""Items a body stores into a list of images and reads back (passes/stored_places.py): YOLOv5's Detect stores
`x[i] = x[i].view(bs, na, no, ny, nx).permute(0, 1, 3, 4, 2)` into the list of feature maps and reads `x[i]`
again. A read of the same place takes the value stored, as it lies (its rank, sizes and pending permute kept: the
view folds into the channels-last map, the permute stays pending), until a statement touches the list otherwise,
rebinds the index or changes the item. The ported head matches torch on hypothesis-drawn inputs."""

import textwrap

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.frontend.names import names_bound_in
from porter.passes.stored_places import place_of, still_held
from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

STATEMENTS = {  # statement after `x[i]` was stored: whether the kept value still stands
    "y = x[i].sigmoid()": True,
    "bs, _, h, w = x[ i ].shape": True,
    "y = self.x + xx[i]": True,
    "return x": False,
    "y = foo(x)": False,
    "y = x[j]": False,
    "x[i] += 1": False,
    "x[ i ].mul_(2)": False,
    "i = 3": False,
    "for i in range(3):\n    pass": False,
    "if c:\n    x[i] = z": False,
    "y = x[i] == z": True,
    "while (i := i + 1) < 3:\n    pass": False,
}


@pytest.mark.parametrize("statement", sorted(STATEMENTS))
def test_a_statement_keeps_or_expires_the_place(statement):
    node = cst.parse_statement(statement + "\n")
    kept = still_held({"x[i]": "value"}, statement, names_bound_in(node, loop_targets=True), fresh=set())
    assert bool(kept) is STATEMENTS[statement]


def test_places_are_list_items_by_name_or_literal():
    assert place_of("x[i]") == ("x", "i")
    assert place_of("feats[ -1 ]") == ("feats", "-1")
    assert place_of("x[i + 1]") is None
    assert place_of("self.x[i]") is None


SOURCE = '''
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, ch=(8, 12), na=2, no=5):
        super().__init__()
        self.na, self.no, self.nl = na, no, len(ch)
        self.m = nn.ModuleList(nn.Conv2d(c, na * no, 1) for c in ch)

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            z.append(x[i].sigmoid().view(bs, -1, self.no))
        return torch.cat(z, 1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.Conv2d(8, 12, 3, stride=2, padding=1)
        self.head = Head()

    def forward(self, x):
        p3 = self.a(x)
        return self.head([p3, self.b(p3)])
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("places"), textwrap.dedent(SOURCE), ("3,8,8",))


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.sampled_from([2, 5, 8]),
       width=st.sampled_from([3, 6, 9]))
def test_head_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))], tolerance=1e-5)


def test_the_item_read_back_is_not_converted_again(pair):
    x = random_input(0, (2, 3, 8, 10))
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
    # the input's; per level the permute torch makes too, and the store bringing the 5-d item to the list's layout
    assert count_transposes(pair.keras_model, [x]) <= 5
