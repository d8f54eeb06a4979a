"""Every node of a parsed file by enclosing scope and node type, from one walk of the module.

The report, the TPU lint and the training-script planner each ask "which calls / names / attributes are inside this
class or method?"; walking the class again for every question made conversion time grow with the number of
questions (a 3,500-line file was walked ~10 times). `NodeIndex` walks the module once (without rebuilding it:
frontend/walk.py) and numbers the nodes in visit order: each node type keeps the numbers of its nodes, each scope
(the module, a class, a function) the range of numbers inside it, so a question is two bisections and a slice.
Recording a node once, not once per enclosing scope, made the index a third as costly on a 3,500-line file.
A node that is not part of the indexed module (a node built by a pass) is walked on its own, once.
"""

import bisect
import heapq

import libcst as cst

from porter.frontend.walk import TOKEN_NODES, children

SCOPES = frozenset({cst.Module, cst.ClassDef, cst.FunctionDef})  # exact types: libcst does not subclass them


# whitespace, comment and operator nodes: no question asks for them, and they hold no node of another kind (half of
# a file's nodes: neither recorded nor walked)
UNINDEXED = TOKEN_NODES


class NodeIndex:
    """nodes_in(scope, *kinds): the nodes of exactly those types inside `scope`, in source (pre-)order."""

    def __init__(self, module):
        self._kinds = {}  # node type -> ([visit number], [node]), numbers ascending
        self._spans = {}  # scope node -> (first, end) visit numbers of the nodes inside it
        self._count = 0
        self._walk(module)

    def nodes_in(self, scope, *kinds):
        if not UNINDEXED.isdisjoint(kinds):
            raise ValueError(f"the node index does not keep whitespace, comment or operator nodes: {kinds}")
        span = self._spans.get(scope)
        if span is None:
            self._walk(scope)
            span = self._spans[scope]
        if len(kinds) == 1:
            return self._slice(kinds[0], span)[1]
        slices = [zip(*self._slice(kind, span), strict=True) for kind in kinds]
        return [node for _, node in heapq.merge(*slices, key=lambda entry: entry[0])]

    def _slice(self, kind, span):
        numbers, nodes = self._kinds.get(kind, ((), ()))
        first, end = bisect.bisect_left(numbers, span[0]), bisect.bisect_left(numbers, span[1])
        return numbers[first:end], nodes[first:end]

    def _walk(self, root):
        kinds, spans = self._kinds, self._spans
        count = self._count

        def visit(node):
            nonlocal count
            if node is not root:  # the root is not inside itself
                kind = type(node)
                entry = kinds.get(kind)
                if entry is None:
                    entry = kinds[kind] = ([], [])
                entry[0].append(count)
                entry[1].append(node)
                count += 1
            first = count
            for child in children(node):
                if type(child) not in UNINDEXED:
                    visit(child)
            if node is root or type(node) in SCOPES:
                spans[node] = (first, count)

        visit(root)
        self._count = count
