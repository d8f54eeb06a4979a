"""parsed_module: libcst's tree of a source without the per-node checks during the parse, the same tree; nodes
made afterwards are checked again, and text that is not Python still raises the parser's error."""

from pathlib import Path

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.frontend.unchecked_parse import parsed_module

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def same_tree(text):
    checked, unchecked = cst.parse_module(text), parsed_module(text)
    assert unchecked.deep_equals(checked)
    assert unchecked.code == text


@pytest.mark.parametrize("name", ["resnet.py", "gpt_mini.py", "unet.py", "gluon/resnet_v1.py", "train_mnist.py"])
def test_fixtures_parse_to_the_same_tree(name):
    same_tree((FIXTURES / name).read_text())


NAMES = st.sampled_from(["x", "self.fc", "torch.relu", "a[0]", "(b)", "f(1, k=2)", "(not y)", "-z", "'s'", "1.5e-3"])
OPERATORS = st.sampled_from([" + ", "*", " if c else ", " and ", "@", " ** ", " < ", ",", " not in "])


@st.composite
def expressions(draw):
    parts = draw(st.lists(NAMES, min_size=1, max_size=6))
    text = parts[0]
    for part in parts[1:]:
        text = f"({text}){draw(OPERATORS)}{part}" if draw(st.booleans()) else f"{text}{draw(OPERATORS)}{part}"
    return text


@settings(max_examples=60, deadline=None)
@given(st.lists(expressions(), min_size=1, max_size=5), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_drawn_sources_parse_to_the_same_tree(lines, newline, in_a_class):
    body = [f"v{i} = {line}" for i, line in enumerate(lines)]
    if in_a_class:
        body = ["class Net(nn.Module):", "    def forward(self, x):  # a comment",
                *(f"        {line}" for line in body), "        return x"]
    same_tree(newline.join(["import torch", *body]) + newline)


def test_nodes_made_after_the_parse_are_checked_again():
    parsed_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
    with pytest.raises(cst.CSTValidationError):  # unbalanced parentheses
        cst.Name("x", lpar=[cst.LeftParen()])


def test_text_that_is_not_python_raises_the_parser_error():
    with pytest.raises(cst.ParserSyntaxError):
        parsed_module("def f(:\n")
    with pytest.raises(cst.CSTValidationError):  # and the checks are back after a failed parse
        cst.Name("x", lpar=[cst.LeftParen()])
