"""A call whose result is a tuple or list, handed straight to an op (`torch.cat(self.features(x), 1)`, the
Sequential's last block returning two branches): its items are read through the call, which runs once, never
through the last block's own return expressions (its locals: undefined names in the caller, exit 3 before).
Compared with torch on drawn sizes, eagerly and under XLA."""

import inspect
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

MODEL = '''
import torch
import torch.nn as nn


class Branches(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(4, 2, 1)
        self.b = nn.Conv2d(4, 3, 1)

    def forward(self, x):
        left = self.a(x)
        right = self.b(x)
        return {returned}


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), Branches())
        self.branches = Branches()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x):
        return {op}
'''

# the block's own locals in its return: read in the caller they were undefined names (`porter convert` exit 3)
TUPLE, LIST = "left, right", "[left, torch.relu(right)]"
CASES = {
    "cat_sequential": (TUPLE, "torch.cat(self.features(x), 1)"),
    "cat_sequential_list": (LIST, "torch.cat(self.features(x), dim=1) * 2.0"),
    "cat_sequential_negative_dim": (TUPLE, "torch.cat(self.features(x), -3)"),
    "cat_class": (TUPLE, "torch.cat(self.branches(self.conv(x)), 1)"),
    "cat_list_of_result": (TUPLE, "torch.cat(list(self.features(x)), 1)"),
    "stack_sequential": (TUPLE, "torch.stack(self.features(x)[0:1] + (self.features(x)[1][:, :2],), 0)"),
    "item_of_sequential": (TUPLE, "self.features(x)[1] + self.features(x)[0].mean(1, keepdim=True)"),
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    sources = {name: textwrap.dedent(MODEL).replace("{returned}", returned).replace("{op}", op)
               for name, (returned, op) in CASES.items()}
    return cached(lambda name: port(tmp_path_factory.mktemp(name), sources[name]))


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([1, 2, 5]), width=st.sampled_from([1, 3, 4]),
       seed=st.integers(0, 2**16))
def test_sequence_result_matches_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], what=f"{name} x{x.shape}")
    assert_same_outputs(ported(name), [x], what=f"{name} XLA x{x.shape}", jit=True)


@pytest.mark.parametrize("name", ["cat_sequential", "cat_sequential_list", "cat_class", "cat_list_of_result"])
def test_call_runs_once(ported, name):
    """The call's result is listed whole (or its items converted in one pass over it): one call, not one per item."""
    source = inspect.getsource(ported(name).keras_module.OpModel.call)
    called = "self.branches(" if "branches" in CASES[name][1] else "self.features("
    assert source.count(called) == 1, source
    assert "left" not in source and "right" not in source and "self.a(" not in source, source
