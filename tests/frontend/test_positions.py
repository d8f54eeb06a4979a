"""node_positions gives libcst's PositionProvider figures for every node but whitespace."""

from pathlib import Path

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from libcst.metadata import MetadataWrapper, PositionProvider

from porter.frontend.positions import WHITESPACE, node_positions

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

TRICKY = '''"""Doc."""
import torch.nn as nn  # a comment


@decorator(1,
           2)
class Net(nn.Module):  # trailing
    x: int = (1 +
              2)

    def forward(self, x, *, y=None):
        # a comment line
        z = [a for a in x if a] if y is None else {k: v for k, v in y.items()}
        s = f"{x!r:>{y}} and {z=}" \\
            "continued"
        with open(x) as f, open(y) as g:
            pass
        try:
            return lambda q: q ** -2
        except (ValueError, TypeError) as error:
            raise RuntimeError("no") from error
        finally:
            del z
'''


def libcst_positions(module):
    return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


def assert_same_positions(text):
    module = cst.parse_module(text)
    expected = libcst_positions(module)
    found = node_positions(module)
    kept = [node for node in expected if type(node) not in WHITESPACE]
    assert set(found) == set(kept)
    for node in kept:
        want, got = expected[node], found[node]
        assert (got.start.line, got.start.column, got.end.line, got.end.column) == (
            want.start.line, want.start.column, want.end.line, want.end.column), (type(node).__name__, want, got)


@pytest.mark.parametrize("name", ["resnet.py", "gpt_mini.py", "unet.py", "gluon/resnet_v1.py", "train_mnist.py"])
def test_fixture_positions_match_libcst(name):
    assert_same_positions((FIXTURES / name).read_text())


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_tricky_code_positions_match_libcst(newline):
    assert_same_positions(TRICKY.replace("\n", newline))


def test_whitespace_has_no_position():
    module = cst.parse_module("x = 1  # c\n")
    found = node_positions(module)
    assert not [node for node in found if type(node) in WHITESPACE]
    comment = next(node for node in found if isinstance(node, cst.Comment))
    assert (found[comment].start.line, found[comment].start.column) == (1, 7)


@pytest.mark.parametrize("text", ["", "\n", "# only a comment", "# only a comment\n", "x = 1", "x = 1\n\n\n"])
def test_module_ends_match_libcst(text):
    assert_same_positions(text)


NAMES = st.lists(st.sampled_from(["x", "self", "nn", "é", "_a1"]), min_size=1, max_size=4)


@settings(max_examples=40, deadline=None)
@given(names=NAMES, parens=st.lists(st.integers(0, 2), min_size=4, max_size=4), first=st.booleans())
def test_names_and_parentheses_match_libcst(names, parens, first):
    """The pass's own codegen of names and parenthesised expressions: a name first in the file, names in any
    number of parentheses, in calls, attributes and subscripts over several lines."""
    def wrapped(text, depth):
        return "(" * depth + text + ")" * depth

    call = wrapped(f"{names[0]}(\n    {', '.join(wrapped(n, parens[1]) for n in names)},\n)", parens[0])
    lines = [f"{wrapped(names[-1], parens[2])} = {call}.{names[0]}[{wrapped(names[0], parens[3])}]"]
    if not first:
        lines.insert(0, "# a comment first")
    assert_same_positions("\n".join(lines) + "\n")


def test_libcst_codegen_is_its_own_after_the_pass():
    module = cst.parse_module(TRICKY)
    node_positions(module)
    assert module.code == TRICKY
    assert libcst_positions(module)  # libcst's provider, with its own codegen state, still works
    # the whitespace and newline shortcuts are the pass's alone: those classes codegen as CSTNode says again
    assert "_codegen" not in cst.SimpleWhitespace.__dict__ and "_codegen" not in cst.Newline.__dict__
