"""Walk a libcst tree with a read-only visitor without rebuilding it.

`node.visit(visitor)` rebuilds every node it passes, even for a `CSTVisitor` that changes nothing: each node's
`_visit_and_replace_children` constructs and validates a copy. On a 3,500-line file that was most of a walk's
time. `walk(node, visitor)` calls the same hooks (`on_visit`, and `on_leave` after the children) on the same nodes
in the same order, and builds nothing. It does not call the per-attribute hooks (`visit_Call_func`), which porter's
visitors do not define.
"""

import dataclasses

import libcst as cst

_CHILD_FIELDS = {}  # node class -> its field names, those libcst visits first and in libcst's visit order


class _FieldOrder(cst.CSTVisitor):
    """Records the attribute names libcst visits on one node, in order, without going below it."""

    def __init__(self):
        super().__init__()
        self.names = []

    def on_visit(self, node):
        return False

    def on_leave(self, original_node):
        pass

    def on_visit_attribute(self, node, attribute):
        self.names.append(attribute)

    def on_leave_attribute(self, original_node, attribute):
        pass


def child_fields(node):
    """The names of `node`'s fields that may hold child nodes, in the order libcst visits them.

    The order comes from libcst itself (one shallow visit of the first node of each class), so it is the lexical
    order libcst's own walks use (`IfExp` visits `body` before `test`). A field libcst visits only when it is set
    (an f-string's `format_spec`) is visited last; the other unvisited fields hold plain values (a `Name`'s string).
    """
    kind = type(node)
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        probe = _FieldOrder()
        node._visit_and_replace_children(probe)
        visited = list(dict.fromkeys(probe.names))
        names = _CHILD_FIELDS[kind] = (*visited, *(f.name for f in dataclasses.fields(kind) if f.name not in visited))
    return names


def walk(node, visitor):
    """`node.visit(visitor)` for a visitor that only reads: the same hooks in the same order, no copies made."""
    if visitor.on_visit(node):
        for name in _CHILD_FIELDS.get(type(node)) or child_fields(node):
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                walk(value, visitor)
            elif type(value) is tuple or type(value) is list:  # sequences of a node hold nodes only
                for child in value:
                    walk(child, visitor)
    visitor.on_leave(node)
