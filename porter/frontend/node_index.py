"""Every node of a parsed file by enclosing scope and node type, from one walk of the module.

The report, the TPU lint and the training-script planner each ask "which calls / names / attributes are inside this
class or method?"; walking the class again for every question made conversion time grow with the number of
questions (a 3,500-line file was walked ~10 times). `NodeIndex` walks the module once, recording each node under
every scope it is nested in (the module, classes, functions), and answers from those tables in source order.
A node that is not part of the indexed module (a node built by a pass) is walked on its own, once.
"""

import heapq
import itertools

import libcst as cst

SCOPES = (cst.Module, cst.ClassDef, cst.FunctionDef)


class NodeIndex:
    """nodes_in(scope, *kinds): the nodes of exactly those types inside `scope`, in source (pre-)order."""

    def __init__(self, module):
        self._tables = {}  # scope node -> {node type: [(visit number, node)]}
        self._counter = itertools.count()
        self._walk(module)

    def nodes_in(self, scope, *kinds):
        table = self._tables.get(scope)
        if table is None:
            self._walk(scope)
            table = self._tables[scope]
        if len(kinds) == 1:
            return [node for _, node in table.get(kinds[0], ())]
        return [node for _, node in heapq.merge(*(table.get(kind, ()) for kind in kinds))]

    def _walk(self, root):
        tables, counter = self._tables, self._counter
        open_tables = [tables.setdefault(root, {})]

        class Walker(cst.CSTVisitor):
            def on_visit(self, node):
                if node is root:
                    return True
                entry = (next(counter), node)
                kind = type(node)
                for table in open_tables:
                    table.setdefault(kind, []).append(entry)
                if isinstance(node, SCOPES):
                    table = {}
                    tables[node] = table
                    open_tables.append(table)
                return True

            def on_leave(self, original_node):
                if original_node is not root and isinstance(original_node, SCOPES):
                    open_tables.pop()

        root.visit(Walker())
