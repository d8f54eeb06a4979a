"""A forward parameter with a literal default that no call in the file hands (passes/unhanded_flags.py):
`def forward(self, x, return_map=False)` with `if return_map: return x * a, a` beside `return x * a` (a non-local
block's `return_nl_map`, DINO's `return_attention`). Its two returns disagreed, so the class returned torch's layout
and every caller converted back (4 Transposes where the boundary needs 2). The parameter now holds its default in
the translation: the branch it never takes is written out as a dead branch and decides no layout. A class whose
flag some call hands (by keyword, or positionally through a loop over blocks) keeps both paths. Compared with torch
for hypothesis-drawn sizes, batch 1 included."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.frontend.source import parse_source
from porter.passes.unhanded_flags import unhanded_defaults
from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)

    def forward(self, x, return_map=False, scale=1.0):
        a = self.conv(x).sigmoid() * scale
        if return_map:
            return x * a, a
        return x * a


class Handed(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x, with_skip=False):
        y = self.conv(x)
        if with_skip:
            return y + x, y
        return y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 2, 1)
        self.gate = Gate(8)
        self.gates = nn.ModuleList([Gate(8), Gate(8)])
        self.handed = nn.ModuleList([Handed(8), Handed(8)])
        self.head = nn.Conv2d(8, 4, 3, padding=1)

    def forward(self, x):
        x = self.gate(self.stem(x))
        for gate in self.gates:
            x = gate(x)
        for block in self.handed:
            x, skip = block(x, with_skip=True)
            x = x - skip
        return self.head(x)
'''

UNHANDED_ONLY = SOURCE.replace("""        for block in self.handed:
            x, skip = block(x, with_skip=True)
            x = x - skip
""", "")


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {"flags": SOURCE, "unhanded": UNHANDED_ONLY})


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), height=st.integers(2, 13), width=st.integers(2, 13), seed=st.integers(0, 2**16))
def test_flagged_returns_match_torch(ported, batch, height, width, seed):
    pair = ported("flags")
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pair, [x], tolerance=1e-4)


def test_a_flag_no_call_hands_decides_no_layout(ported):
    pair = ported("unhanded")
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 13, 11))) <= 2  # (was 4 and more)


def test_which_parameters_are_unhanded(tmp_path):
    path = tmp_path / "flags.py"
    path.write_text(textwrap.dedent(SOURCE))
    source = parse_source(path)
    assert unhanded_defaults(source, source.classes["Gate"], "Net") == {"return_map": False, "scale": 1.0}
    assert unhanded_defaults(source, source.classes["Handed"], "Net") == {}  # (handed by keyword in a loop)
    assert unhanded_defaults(source, source.classes["Net"], "Net") == {}  # (the user calls the main class)
