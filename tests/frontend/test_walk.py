"""frontend/walk.py: `walk(node, visitor)` calls a read-only visitor's hooks as `node.visit(visitor)` does."""

from pathlib import Path

import libcst as cst
import pytest

from porter.frontend.walk import TOKEN_NODES, walk

FIXTURES = sorted(Path(__file__).resolve().parents[2].joinpath("fixtures").rglob("*.py"))


class Recorder(cst.CSTVisitor):
    """Records visit_/leave_ hooks by name; does not enter function bodies (a visit_ returning False)."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def visit_Name(self, node):
        self.seen.append(("visit", "Name", node.value))

    def leave_Name(self, node):
        self.seen.append(("leave", "Name", node.value))

    def visit_Call(self, node):
        self.seen.append(("visit", "Call", id(node)))

    def leave_Call(self, node):
        self.seen.append(("leave", "Call", id(node)))

    def visit_Lambda(self, node):
        self.seen.append(("visit", "Lambda", id(node)))
        return False

    def visit_FunctionDef(self, node):
        self.seen.append(("visit", "FunctionDef", node.name.value))
        return node.name.value != "forward"


class TokenRecorder(Recorder):
    """Hooks on token nodes (a comment, a comma, whitespace): a walk enters them then, though it passes over them
    for a visitor without such hooks."""

    def visit_Comment(self, node):
        self.seen.append(("visit", "Comment", node.value))

    def leave_Comma(self, node):
        self.seen.append(("leave", "Comma", id(node)))

    def visit_SimpleWhitespace(self, node):
        self.seen.append(("visit", "SimpleWhitespace", node.value))


class EveryNode(cst.CSTVisitor):
    """Overrides on_visit/on_leave (the generic path)."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def on_visit(self, node):
        self.seen.append(("in", id(node)))
        return not isinstance(node, cst.Lambda)

    def on_leave(self, original_node):
        self.seen.append(("out", id(original_node)))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
@pytest.mark.parametrize("visitor_class", [Recorder, TokenRecorder, EveryNode])
def test_walk_calls_the_hooks_libcst_calls(path, visitor_class):
    module = cst.parse_module(path.read_text())
    by_libcst, by_walk = visitor_class(), visitor_class()
    if visitor_class is EveryNode:  # libcst's visit rebuilds nodes: compare by position in the walk instead
        module = cst.MetadataWrapper(module, unsafe_skip_copy=True).module
    module.visit(by_libcst)
    walk(module, by_walk)
    if visitor_class is EveryNode:
        assert [kind for kind, _ in by_walk.seen] == [kind for kind, _ in by_libcst.seen]
    else:
        assert by_walk.seen == by_libcst.seen



class AllNodes(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.seen = []

    def on_visit(self, node):
        self.seen.append(node)
        return True


class NodesButTokens(cst.CSTVisitor):
    """Every node but whitespace, comments and operators (TOKEN_NODES), and none inside those."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def on_visit(self, node):
        if type(node) in TOKEN_NODES:
            return False
        self.seen.append(node)
        return True


@pytest.mark.parametrize("path", FIXTURES[:6], ids=lambda p: p.name)
def test_descendants_are_the_nodes_walk_visits_in_its_order(path):
    """descendants: what walk visits, in its order, without the token nodes (none holds a node of another kind)."""
    from porter.frontend.walk import descendants

    module = cst.parse_module(path.read_text())
    visited = NodesButTokens()
    walk(module, visited)
    assert [id(node) for node in descendants(module)] == [id(node) for node in visited.seen]
    everything = AllNodes()
    walk(module, everything)
    assert {id(node) for node in everything.seen if type(node) not in TOKEN_NODES} == set(map(id, visited.seen))
