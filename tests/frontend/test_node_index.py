"""NodeIndex answers "which nodes of these types are inside this scope" as a fresh walk of that scope would, in
source order, for the module, classes, methods, nested functions and nodes outside the indexed module."""

import libcst as cst
import pytest

from porter.frontend.node_index import UNINDEXED, NodeIndex

SOURCE = '''
import torch.nn as nn

def helper(x):
    return x.relu()

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        def inner(y):
            return helper(y) * 2
        return self.fc(inner(x)).double()
'''


def walked(scope, *kinds):
    found = []

    class Collector(cst.CSTVisitor):
        def on_visit(self, node):
            if node is not scope and type(node) in kinds:
                found.append(node)
            return True

    scope.visit(Collector())
    return found


def scopes(module):
    found = [module]

    class Collector(cst.CSTVisitor):
        def visit_ClassDef(self, node):
            found.append(node)

        def visit_FunctionDef(self, node):
            found.append(node)

    module.visit(Collector())
    return found


def test_every_scope_answers_as_its_own_walk_would():
    module = cst.parse_module(SOURCE)
    index = NodeIndex(module)
    for scope in scopes(module):
        for kinds in [(cst.Call,), (cst.Name,), (cst.Attribute, cst.Call), (cst.FunctionDef,)]:
            assert index.nodes_in(scope, *kinds) == walked(scope, *kinds)


def test_nested_scopes_are_counted_in_their_enclosing_ones():
    module = cst.parse_module(SOURCE)
    index = NodeIndex(module)
    net = next(s for s in module.body if isinstance(s, cst.ClassDef))
    calls = [module.code_for_node(c.func) for c in index.nodes_in(net, cst.Call)]
    assert calls == ["super().__init__", "super", "nn.Linear", "helper", "self.fc(inner(x)).double", "self.fc",
                     "inner"]


def test_a_node_outside_the_module_is_walked_on_its_own():
    module = cst.parse_module(SOURCE)
    index = NodeIndex(module)
    expression = cst.parse_expression("f(g(x), y.z)")
    assert [n.value for n in index.nodes_in(expression, cst.Name)] == ["f", "g", "x", "y", "z"]
    assert index.nodes_in(expression, cst.Call) == walked(expression, cst.Call)


def test_every_node_kind_but_tokens_answers_as_a_walk_would():
    """Whitespace, comment and operator nodes are neither kept nor walked (they hold no other kind of node): every
    other kind is found as a walk finds it, and asking for one of them is an error rather than a silent []."""
    module = cst.parse_module(SOURCE + "\nx = [a + b, (c), {d: e}]  # note\n")
    index = NodeIndex(module)
    kinds = {type(node) for node in walked(module, *_all_kinds(module))}
    for kind in kinds - UNINDEXED:
        assert index.nodes_in(module, kind) == walked(module, kind), kind
    assert {cst.Comma, cst.Comment, cst.SimpleWhitespace, cst.Add, cst.LeftParen} <= kinds & UNINDEXED
    with pytest.raises(ValueError):
        index.nodes_in(module, cst.Comma)


def _all_kinds(module):
    found = set()

    class Collector(cst.CSTVisitor):
        def on_visit(self, node):
            found.add(type(node))
            return True

    module.visit(Collector())
    return found
