"""An index of the training code of a source file: functions, assignments, calls, loops and parents.

Model classes (the nn.Module subclasses porter translates) are left out; everything else in the file (module-level
code, `if __name__ == "__main__":` blocks, functions, methods of plain classes) is training/data code.
"""

from dataclasses import dataclass, field

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.walk import TOKEN_NODES, children


@dataclass
class Assignment:
    target: str
    value: cst.BaseExpression
    function: object  # cst.FunctionDef or None (module level)
    node: cst.CSTNode


@dataclass
class CallSite:
    callee: str  # dotted name as written (`optim.Adam`, `criterion`, `configure_optimizer`)
    node: cst.Call
    function: object


@dataclass
class SourceIndex:
    source: object
    parents: dict = field(default_factory=dict)
    functions: dict = field(default_factory=dict)  # name -> FunctionDef (module level and plain-class methods)
    assignments: list = field(default_factory=list)
    calls: list = field(default_factory=list)
    for_targets: list = field(default_factory=list)  # (name, For node, function)

    @classmethod
    def build(cls, source):
        """The index of `source`, built on the first call and kept on it: the training reader, the rendered
        script's helpers and the TPU lint all ask for it, and nothing changes an index once built."""
        index = source.__dict__.get("_training_index")
        if index is None:
            index = source.__dict__["_training_index"] = cls(source)
            _Indexer(index).walk(source.module)
        return index

    # --- navigation ------------------------------------------------------------------------------------
    def function_of(self, node):
        node = self.parents.get(node)
        while node is not None and not isinstance(node, cst.FunctionDef):
            node = self.parents.get(node)
        return node

    def loops_around(self, node):
        """Enclosing for/while loops of `node` inside its function, innermost first."""
        loops = []
        current = self.parents.get(node)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            if isinstance(current, (cst.For, cst.While)):
                loops.append(current)
            current = self.parents.get(current)
        return loops

    def inside(self, node, ancestor):
        current = node
        while current is not None:
            if current is ancestor:
                return True
            current = self.parents.get(current)
        return False

    def line(self, node):
        return self.source.line_of(node)

    # --- queries ---------------------------------------------------------------------------------------
    def assignments_of(self, name, function):
        return [a for a in self.assignments if a.target == name and a.function is function]

    def calls_to(self, name):
        return [c for c in self.calls if c.callee == name]

    def method_calls(self, method):
        """Calls `<name>.method(...)` as (receiver name, CallSite)."""
        found = []
        for call in self.calls:
            head, _, last = call.callee.rpartition(".")
            if last == method and head and "." not in head:
                found.append((head, call))
        return found

    def resolve(self, node):
        return self.source.imports.resolve(node)


class _Indexer:
    def __init__(self, index):
        self.index = index
        self.model_classes = set(index.source.classes)

    def walk(self, module):
        self._visit(module, None, None)

    def _visit(self, node, parent, function):
        index = self.index
        if parent is not None:
            index.parents[node] = parent
        if isinstance(node, cst.ClassDef) and node.name.value in self.model_classes:
            return
        if isinstance(node, cst.FunctionDef):
            index.functions.setdefault(node.name.value, node)
            function = node  # (what its body binds and calls is the function's)
        elif isinstance(node, cst.Assign):
            for target in node.targets:
                self._record_target(target.target, node.value, function, node)
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            self._record_target(node.target, node.value, function, node)
        elif isinstance(node, cst.Call):
            callee = dotted_name(node.func)
            if callee is None and isinstance(node.func, cst.Attribute):
                callee = "?." + node.func.attr.value
            if callee is not None:
                index.calls.append(CallSite(callee, node, function))
        elif isinstance(node, cst.For) and isinstance(node.target, cst.Name):
            index.for_targets.append((node.target.value, node, function))
        for child in children(node):
            if type(child) not in TOKEN_NODES:  # (whitespace, comments, operators: nothing asks for them)
                self._visit(child, node, function)

    def _record_target(self, target, value, function, node):
        if isinstance(target, cst.Name):
            self.index.assignments.append(Assignment(target.value, value, function, node))
        elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) and len(
                target.elements) == len(value.elements):
            for element, item in zip(target.elements, value.elements):
                self._record_target(element.value, item.value, function, node)
