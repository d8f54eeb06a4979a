"""In-place activations overwrite the tensor they are handed, in torch, and code written outside this project relies
on it: a block whose `self.rep = nn.Sequential(nn.ReLU(inplace=True), ...)` runs on `inp` and then adds `inp` back
adds the activated input; `x = self.conv(self.relu(inp))` with `self.relu = nn.ReLU(inplace=True)` leaves `inp`
activated; a bare `F.relu(x, inplace=True)` activates `x`. The port ignored `inplace=` and read the input as it was
(a silent mismatch, max error 1.7). The name an in-place activation overwrote is now rebound to it where it is read
again (passes/in_place_activations.py, statements.py `in_place_alias`), for the module forms, a Sequential starting
with one, nested calls and the functional forms, LeakyReLU (not idempotent) included, and so is every name a plain
`residual = x` left holding the same tensor (`residual = x; x = self.relu(x)`: max error 1.6 before). Matches torch for drawn sizes;
an activation whose input is not read again adds no line."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.rep = nn.Sequential(nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(c, c, 3, 1, 1))
        self.relu = nn.ReLU(inplace=True)
        self.act = nn.ReLU(True)
        self.conv = nn.Conv2d(c, c, 1)

    def forward(self, inp):
        x = self.rep(inp)          # inp: LeakyReLU(inp) from here on
        y = self.conv(self.relu(inp))
        z = self.act(x)            # x: relu(x) from here on
        F.relu(y, inplace=True)
        w = F.leaky_relu_(z - 1.0, 0.1) if False else z
        return x + inp + y + w


class Aliased(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
        self.rep = nn.Sequential(nn.ReLU(inplace=True), nn.Conv2d(c, c, 1))
        self.conv = nn.Conv2d(c, c, 3, 1, 1)

    def forward(self, x):
        residual = x
        shortcut = residual        # both hold x
        x = self.relu(x)           # residual, shortcut: relu(x) too
        kept = x
        kept = kept * 2.0          # rebound: no longer x's
        out = self.rep(kept)       # kept: relu(kept)
        identity = out
        h = self.conv(F.relu_(out))    # identity: relu(out); out is not read again
        return h + residual + shortcut + identity + kept


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 6, 3, 1, 1)
        self.block = Block(6)
        self.aliased = Aliased(6)
        self.last = nn.ReLU(inplace=True)

    def forward(self, x):
        h = self.aliased(self.block(self.stem(x)) - 0.5)
        return self.last(h)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("in_place_activations"), textwrap.dedent(SOURCE), input_specs=("3,9,11",))


def test_each_overwritten_name_is_rebound(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    block = code[code.index("class Block"):code.index("class Aliased")]
    for name in ("inp", "x", "y"):
        assert f"in-place activation overwrites `{name}`" in block, name
    aliased = code[code.index("class Aliased"):code.index("class OpModel")]
    for names in ("`residual`, `shortcut`", "`kept`", "`identity`"):
        assert f"in-place activation overwrites {names} as well" in aliased, names
    tail = code[code.index("class OpModel"):]
    assert "in-place activation" not in tail  # (`self.last(h)`: h is not read again)


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), height=st.integers(3, 12), width=st.integers(3, 12))
def test_port_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])


LIST_BUILT = '''
import torch.nn as nn


class XBlock(nn.Module):
    """Aligned Xception's block: its layers gathered in a list, the shared in-place ReLU leading where asked."""

    def __init__(self, c, start_with_relu=True, grow_first=True):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
        rep = []
        if start_with_relu:
            rep.append(self.relu)
        rep.append(nn.Conv2d(c, c, 3, padding=1, groups=c))
        rep.append(nn.BatchNorm2d(c))
        if not grow_first:
            rep.insert(1, nn.LeakyReLU(0.2, inplace=True))
        self.rep = nn.Sequential(*rep)

    def forward(self, inp):
        x = self.rep(inp)
        skip = inp
        return x + skip


class Literal(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.act = nn.LeakyReLU(0.1, inplace=True)
        self.rep = nn.Sequential(self.act, nn.Conv2d(c, c, 1))

    def forward(self, x):
        y = self.rep(x)
        return y * x


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 6, 3, 2, 1)
        self.first = XBlock(6)
        self.plain = XBlock(6, start_with_relu=False)
        self.leaky = XBlock(6, start_with_relu=False, grow_first=False)
        self.literal = Literal(6)

    def forward(self, x):
        return self.literal(self.leaky(self.plain(self.first(self.stem(x)))))
'''


@pytest.fixture(scope="module")
def list_built(tmp_path_factory):
    return port(tmp_path_factory.mktemp("in_place_list_built"), LIST_BUILT, input_specs=("3,9,11",))


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), height=st.integers(3, 12), width=st.integers(3, 12))
def test_a_sequential_built_from_a_list_overwrites_its_input_where_its_first_layer_does(list_built, seed, batch,
                                                                                        height, width):
    """`nn.Sequential(*rep)` whose list may start with the shared in-place ReLU (Aligned Xception, DeepLab): which
    layer leads is known per instance, so the port asks at run time (`in_place_head`); an instance whose list
    starts with a convolution leaves its input as it was. `nn.Sequential(self.act, ...)` of an in-place
    `self.act` is the literal case. Before: a silent mismatch (max error 0.39 on a 5-block Xception)."""
    assert_same_outputs(list_built, [random_input(seed, (batch, 3, height, width))])
    code = (list_built.out_dir / "op_model_keras.py").read_text()
    assert "inp = in_place_head(self.rep, inp)" in code and "x = self.rep[0](x)" in code


READ_IN_SAME_STATEMENT = '''
import torch
import torch.nn as nn


class Returned(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.rep = nn.Sequential(nn.ReLU(inplace=True), nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c))

    def forward(self, x):
        return self.rep(x) + x


class Mixed(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.rep = nn.Sequential(nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(c, c, 3, padding=1))
        self.skip = nn.Conv2d(c, c, 1)

    def forward(self, x):
        y = x
        out = self.skip(x) + self.rep(x) + y * 2.0
        return out


class Augmented(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.rep = nn.Sequential(nn.ReLU(inplace=True), nn.Conv2d(c, c, 1))

    def forward(self, x):
        x += self.rep(x)
        return x


class Looped(nn.Module):
    def __init__(self, c, lead=True):
        super().__init__()
        layers = [nn.Conv2d(c, c, 3, padding=1)]
        if lead:
            layers.insert(0, nn.ReLU(inplace=True))
        self.rep = nn.ModuleList(layers)

    def forward(self, x):
        identity = x
        for layer in self.rep:
            x = layer(x)
        return x + identity


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 6, 3, padding=1)
        self.returned = Returned(6)
        self.mixed = Mixed(6)
        self.looped = Looped(6)
        self.unled = Looped(6, lead=False)
        self.augmented = Augmented(6)

    def forward(self, x):
        return self.augmented(self.unled(self.looped(self.mixed(self.returned(self.stem(x))))))
'''


@pytest.fixture(scope="module")
def read_in_same_statement(tmp_path_factory):
    return port(tmp_path_factory.mktemp("in_place_same_statement"), READ_IN_SAME_STATEMENT, input_specs=("3,9,11",))


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), height=st.integers(3, 12), width=st.integers(3, 12))
def test_a_read_in_the_statement_of_the_overwriting_call(read_in_same_statement, seed, batch, height, width):
    """`return self.rep(x) + x`: torch's `+ x` reads the overwritten tensor; `self.skip(x) + self.rep(x)` computed
    `self.skip(x)` before the call ran (the input as it was); `for layer in self.rep: x = layer(x)` over a ModuleList
    led by an in-place ReLU overwrites `identity` on its first turn (per instance: `in_place_head`); `x +=
    self.rep(x)` adds to the overwritten `x`. Before: silent
    mismatches (max error 0.85 for the three in a row)."""
    assert_same_outputs(read_in_same_statement, [random_input(seed, (batch, 3, height, width))])
    code = (read_in_same_statement.out_dir / "op_model_keras.py").read_text()
    assert "rep_out = self.rep(x" in code and "identity = in_place_head(self.rep, x)" in code
