"""SourceFile.code_of slices one-line expressions and simple statements from the text exactly as libcst writes them."""

from pathlib import Path

import libcst as cst
import pytest

from porter.frontend.source import parse_source

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

COMMENTED = '''import torch.nn as nn


class Net(nn.Module):
    def forward(self, x):
        # a comment above

        #   another, indented differently
        y = x + 1  # trailing
        z = (y,
             x)
        s = """two
lines"""; t = 1
        return y
'''


def assert_sliced_like_libcst(source):
    statements = source.nodes_in(source.module, cst.SimpleStatementLine)
    assert statements
    for node in statements:
        assert source.code_of(node) == source.module.code_for_node(node)


@pytest.mark.parametrize("name", ["resnet.py", "gpt_mini.py", "unet.py", "gluon/resnet_v1.py", "train_mnist.py"])
def test_fixture_statements_sliced_like_libcst(name):
    assert_sliced_like_libcst(parse_source(FIXTURES / name))


def test_commented_statements_sliced_like_libcst(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(COMMENTED)
    assert_sliced_like_libcst(parse_source(path))


def test_rewritten_gluon_statements_are_generated(tmp_path):
    """A statement porter rewrote (a Gluon method's `F.` namespace) keeps its source position but not its text."""
    source = parse_source(FIXTURES / "gluon" / "lenet.py")
    for info in source.classes.values():
        for method in info.methods.values():
            for node in source.nodes_in(method, cst.SimpleStatementLine):
                assert source.code_of(node) == source.module.code_for_node(node)
