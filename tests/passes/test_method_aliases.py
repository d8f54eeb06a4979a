"""A constructor binding an attribute to one of the class's own methods, chosen by a flag (ShuffleNet v1's unit:
`self._combine_func = self._add` or `= self._concat`, two staticmethods; here through a conditional expression), called in forward as
`self._combine_func(residual, out)`: the call is translated as a call of those methods, which take the images
channels-last, instead of a callable porter cannot see (torch's order both ways: two Transposes per unit). The port
matches torch for both flags and traces only the boundary's Transposes.
"""

import pytest

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Unit(nn.Module):
    def __init__(self, c, combine="add"):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self._combine_func = self._plus if combine == "add" else self._join

    @staticmethod
    def _plus(x, out):
        return out + x

    @staticmethod
    def _join(x, out):
        return torch.cat([x, out], dim=1)

    def forward(self, x):
        residual = x
        out = self.conv(x)
        out = self._combine_func(residual, out)
        return F.relu(out)


class Net(nn.Module):
    def __init__(self, combine="add"):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 1)
        self.unit = Unit(4, combine)
        self.head = nn.Conv2d(8 if combine == "concat" else 4, 2, 1)

    def forward(self, x):
        return self.head(self.unit(self.stem(x)))
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """combine -> output folder of the snippet's port."""
    return snippet_ports(tmp_path_factory, SOURCE, "3,6,6", "combine")


@pytest.mark.parametrize("combine", ["add", "concat"])
def test_a_method_bound_to_an_attribute_matches_torch_without_conversions(ported, combine):
    pair = PortedPair(ported(combine), seed=2)
    assert_matches_converting_at_the_boundary(pair, random_input(2, (2, 3, 6, 6)))
    code = (ported(combine) / "op_model_keras.py").read_text()
    assert "out = self._combine_func(residual, out)" in code


def test_every_attribute_is_read_from_one_look_at_the_constructor(tmp_path):
    """`self.<attribute>(...)` calls ask for the attribute's methods once per call site; the constructor's assignments
    are read once per class for all of them (a 3,500-line file asked 871 times, each a walk of the constructor), and
    an attribute also bound to something else, or unpacked into, has none."""
    from porter.frontend.source import parse_source
    from porter.passes.method_aliases import aliased_methods

    path = tmp_path / "unit.py"
    path.write_text(SOURCE + '''

class Other(nn.Module):
    def __init__(self, flag=True):
        super().__init__()
        self.f = self._a if flag else self.conv
        self.g, self.h = self._a, self._a
        self.k = self._a
        self.k = self._b

    def _a(self, x):
        return x

    def _b(self, x):
        return x
''')
    source = parse_source(path, str(path))
    looks = []
    nodes_in = source.nodes_in
    source.nodes_in = lambda scope, *kinds: looks.append(scope) or nodes_in(scope, *kinds)
    unit, other = source.classes["Unit"], source.classes["Other"]
    assert aliased_methods(source, unit, "_combine_func") == ("_plus", "_join")
    assert aliased_methods(source, unit, "conv") is None
    assert [aliased_methods(source, other, name) for name in ("f", "g", "h", "k", "missing")] == [
        None, None, None, ("_a", "_b"), None]
    assert len(looks) == 2
