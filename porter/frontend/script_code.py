"""The source file's script code, by line: top-level statements that run something when the file is imported
(dataset downloads, training loops, plots, `net = Net()`: calls, loops, `with` blocks) and that the model classes
do not need.

`porter verify` and the generated test_equivalence.py import the source to build the torch reference; a tutorial
written as one script would train (or download CIFAR-10) first. The manifest lists these line ranges, and the
import blanks them (line numbers stay the source's, for tracebacks). Kept: imports, definitions (inert), the
module docstring, `if __name__ == "__main__":` (inert on import), `try` blocks (optional imports), assignments
that call nothing but container builtins (`BATCH_SIZE = 16`, `CFGS = dict(a=dict(depth=2))`), and every statement that binds a name the model code uses (porter's own
classification: `SourceFile.model_names`).
"""

import libcst as cst

from porter.frontend.names import top_level_bindings
from porter.frontend.walk import walk


def script_line_ranges(source):
    """[[first line, last line], ...] of the top-level statements an import of the source need not run."""
    model_names = source.model_names
    bindings = top_level_bindings(source.module)
    needed = {id(node) for name in model_names for node in bindings.get(name, ())}
    ranges = []
    for statement in source.module.body:
        position = source.positions.get(statement)
        if position is None or position.start.column:
            continue  # inside a top-level `if` porter decided (static_branches.py): blanking it would break the `if`
        if source.linked_from_line is not None and position.start.line >= source.linked_from_line:
            continue  # definitions the linker brought in from other files of the package
        if _kept(statement, needed, model_names):
            continue
        if ranges and ranges[-1][1] == position.start.line - 1:
            ranges[-1][1] = position.end.line
        else:
            ranges.append([position.start.line, position.end.line])
    return ranges


def _kept(statement, needed, model_names):
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef, cst.Try)) or id(statement) in needed:
        return True
    if isinstance(statement, cst.If) and _is_main_guard(statement.test):
        return True
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, (cst.Import, cst.ImportFrom, cst.Pass)):
                return True
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
                return True  # a docstring
    if _bound_inside(statement) & model_names:
        return True
    return isinstance(statement, cst.SimpleStatementLine) and not _calls_anything(statement)  # `BATCH = 4`


# builtins that only make a container of what they are given: `CFGS = dict(a=dict(depth=2))` runs nothing (timm's
# levit.py: its factories read the table)
_CONTAINERS = frozenset({"dict", "list", "tuple", "set", "frozenset"})


def _calls_anything(statement):
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node):
            if isinstance(node.func, cst.Name) and node.func.value in _CONTAINERS:
                return True  # (what it is given may call something)
            found.append(node)
            return False

    walk(statement, Finder())
    return bool(found)


def _bound_inside(statement):
    """Plain names assigned, defined or imported anywhere inside `statement` (an `if` that sets a constant)."""
    names = set()

    class Finder(cst.CSTVisitor):
        def visit_AssignTarget(self, node):
            if isinstance(node.target, cst.Name):
                names.add(node.target.value)

        def visit_AnnAssign(self, node):
            if isinstance(node.target, cst.Name):
                names.add(node.target.value)

        def visit_FunctionDef(self, node):
            names.add(node.name.value)

        def visit_ClassDef(self, node):
            names.add(node.name.value)

        def visit_ImportAlias(self, node):
            names.add(node.asname.name.value if node.asname else cst.Module([]).code_for_node(node.name).split(".")[0])

    walk(statement, Finder())
    return names


def _is_main_guard(test):
    return isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value == "__name__"
