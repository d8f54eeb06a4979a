"""Where a function returns: whether its one `return` is the last statement of its body, or every `return` gives
a value and the body ends with one."""

import functools

import libcst as cst

from porter.frontend.walk import walk


class _ReturnCounter(cst.CSTVisitor):
    """Counts the `return` statements of one function, not of the functions and lambdas defined inside it."""

    def __init__(self, function):
        super().__init__()
        self.function, self.count, self.bare = function, 0, False  # bare: a `return` without a value

    def visit_FunctionDef(self, node):
        return node is self.function

    def visit_ClassDef(self, node):
        return False

    def visit_Return(self, node):
        self.count += 1
        self.bare = self.bare or node.value is None


def returns_once_at_end(function):
    """Whether `function` (a cst.FunctionDef) has exactly one `return`, the last statement of its body, returning a
    value: every call ends there, so what it returns is the same kind of thing on every call."""
    counter = _returns_ending(function)
    return counter is not None and counter.count == 1


def returns_values_at_end(function):
    """Whether `function` ends with a `return` of a value and none of its returns is bare (LLaMA's `repeat_kv`:
    `if n_rep == 1: return hidden_states` before the last `return`): every call gives a value."""
    counter = _returns_ending(function)
    return counter is not None and not counter.bare


def _returns_ending(function):
    """The returns of `function` counted when its body ends with a `return` of a value, else None."""
    statements = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    last = statements[-1] if statements else None
    if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Return)
            and last.body[0].value is not None):
        return None
    counter = _ReturnCounter(function)
    walk(function, counter)
    return counter


@functools.lru_cache(maxsize=4096)  # (nodes hash by identity; asked again for each call of a builder function)
def return_values(body):
    """The values of the `return` statements in `body` (a suite) and its nested blocks, not in nested functions; a
    bare `return` gives none (a tuple)."""
    found = []

    class Visitor(cst.CSTVisitor):
        def visit_Return(self, node):
            if node.value is not None:
                found.append(node.value)

        def visit_FunctionDef(self, node):
            return False

    for statement in body.body:
        walk(statement, Visitor())
    return tuple(found)
