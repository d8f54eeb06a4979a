"""A constructor parameter defaulting to an elementwise torch function (I3D's `Unit3D(..., activation_fn=F.relu)`,
kept as `self._activation_fn` and called under `if self._activation_fn is not None`), some constructions handing
None: the port called it through `call_module`, converting the image to torch's order and back around a ReLU (2
Transposes a call; an I3D 22 -> 7). Where every construction leaves the default or hands None or another
elementwise callable, the attribute is an elementwise callable: called directly, the layout passed through."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch.nn as nn
import torch.nn.functional as F


class Unit(nn.Module):
    def __init__(self, cin, cout, activation_fn=F.relu, use_bn=True):
        super().__init__()
        self._activation_fn = activation_fn
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=not use_bn)
        self.bn = nn.BatchNorm2d(cout) if use_bn else None

    def forward(self, x):
        x = self.conv(x)
        if self.bn is not None:
            x = self.bn(x)
        if self._activation_fn is not None:
            x = self._activation_fn(x)
        return x


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Unit(3, 8)
        self.b = Unit(8, 8, activation_fn=F.silu)
        self.logits = Unit(8, 4, activation_fn=None, use_bn=False)

    def forward(self, x):
        return self.logits(self.b(self.a(x))).mean((2, 3))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("elementwise_defaults"), textwrap.dedent(SOURCE))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), size=st.sampled_from([5, 8]))
def test_port_matches_torch_with_one_transpose(pair, seed, batch, size):
    x = random_input(seed, (batch, 3, size, size))
    assert_same_outputs(pair, [x])
    assert count_transposes(pair.keras_model, [x]) == 1
