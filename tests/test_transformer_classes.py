"""No libcst transformer class is defined inside a function in porter/.

libcst's `node.visit(visitor)` asks `isinstance(visitor, CSTVisitor)` at every node; for a transformer class made
afresh per call, that ABC check misses its caches and walks every visitor class still alive (porter collects garbage
rarely: gc_tuning.py), so the cost grew with the conversion: two such classes in the factory reader took 29 of 57 s
of converting timm's efficientnet.py (26 s with module-level classes). Reads porter/ with `ast`.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "porter"


def local_transformer_classes(tree):
    """(line, class name) of the classes deriving from `*.CSTTransformer` defined inside a function."""
    found = []

    def visit(node, inside_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef) and inside_function and any(
                    ast.unparse(base).endswith("CSTTransformer") for base in child.bases):
                found.append((child.lineno, child.name))
            visit(child, inside_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return found


def test_no_transformer_class_is_made_per_call():
    offenders = [f"{path.relative_to(PACKAGE.parent)}:{line} {name}" for path in sorted(PACKAGE.rglob("*.py"))
                 for line, name in local_transformer_classes(ast.parse(path.read_text()))]
    assert offenders == [], "define these at module level (state through __init__): " + ", ".join(offenders)


def test_the_scan_finds_a_local_transformer():
    tree = ast.parse("def f():\n    class T(cst.CSTTransformer):\n        pass\n\nclass U(cst.CSTTransformer):\n"
                     "    pass\n")
    assert local_transformer_classes(tree) == [(2, "T")]
