"""No computation appears twice in a generated model module (issue 9): folding a transpose once re-emitted its
producer, so `fixtures/gpt_mini.py` ported to the same attention einsum computed twice, the first result dead.

Checked on every golden model module: within one block of statements, an assignment to local names whose value (a
call, an arithmetic expression or a subscript) is the same expression as an earlier one's, with none of the names
it reads rebound in between, computes the same thing twice. Layer constructions (`self.bn1 = BatchNorm2d(planes)`)
make distinct layers and are not computations; a statement that is not an assignment (a loop, a branch, a call for
its effect) ends what the block knows.
"""

import ast

import pytest

from tests.golden.goldens import GOLDEN, fixture_names

COMPUTATIONS = (ast.Call, ast.BinOp, ast.Subscript)


def _names_read(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _names_bound(statement):
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _is_local_computation(statement):
    return (isinstance(statement, ast.Assign) and isinstance(statement.value, COMPUTATIONS)
            and all(isinstance(t, (ast.Name, ast.Tuple)) for t in statement.targets))


def repeated_computations(text):
    """[(line, expression)] of each assignment that recomputes an earlier one of its block."""
    found = []
    blocks = [body for node in ast.walk(ast.parse(text)) for body in (getattr(node, "body", None),
                                                                      getattr(node, "orelse", None))
              if isinstance(body, list)]
    for block in blocks:
        known = {}  # ast.dump of a computation -> the names it reads
        for statement in block:
            if not _is_local_computation(statement):
                known.clear()
                continue
            key = ast.dump(statement.value)
            if key in known:
                found.append((statement.lineno, ast.unparse(statement.value)))
            bound = _names_bound(statement)
            known = {k: reads for k, reads in known.items() if not reads & bound}
            reads = _names_read(statement.value)
            if not reads & bound:
                known[key] = reads
    return found


def test_the_checker_finds_a_dead_computation_recomputed():
    text = "def call(q, k):\n    a = einsum('ij,jk', q, k)\n    a = einsum('ij,jk', q, k)\n    return a\n"
    assert repeated_computations(text) == [(3, "einsum('ij,jk', q, k)")]
    rebound = "def call(x):\n    y = f(x)\n    x = g(y)\n    y = f(x)\n    return y\n"
    assert repeated_computations(rebound) == []


@pytest.mark.parametrize("name", fixture_names())
def test_golden_model_module_computes_nothing_twice(name):
    module = GOLDEN / name / f"{name}_keras.py"
    assert repeated_computations(module.read_text()) == [], module
