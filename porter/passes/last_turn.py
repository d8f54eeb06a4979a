"""Loops whose last statement is an `if` that a turn's index decides against the last turn only.

A pyramid transformer's stage loop folds its tokens back into an image for the next stage on every turn but the
last one (PVT, Twins):

    for i in range(self.num_stages):
        x, (H, W) = patch_embed(x)
        ...
        if i != self.num_stages - 1:
            x = x.reshape(B, H, W, -1).permute(0, 3, 1, 2)

Joined as any `if` is, `x` is an image on one path and tokens on the other: torch's order on both, two transposes
per stage. But the `if` runs on every turn that leads into another one and never on the last: the next turn takes
what its body leaves, the code after the loop what its `else` path leaves. `last_turn_guard` finds such an `if`;
the loop translation (statements.py) carries the two paths apart.
"""

import libcst as cst

from porter.frontend.imports import dotted_name


def last_turn_guard(loop, code, static_of):
    """(the `if` statement, whether its body runs on every turn but the last) when the last statement of `for`
    loop `loop` is an `if` whose test compares the turn's index with the last index (`i != n - 1`, `i < n - 1`,
    `i + 1 < n`; `i == n - 1` runs on the last turn only), else None. The loop runs over `range(n)` or
    `enumerate(items)` (n = len(items)); `code(node)` is a node's source text, `static_of(node)` its value where
    the translator knows it (the last index spelled `len(self.depths) - 1` for a loop over `range(num_stages)`)."""
    statements = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ()
    if not statements or not isinstance(statements[-1], cst.If) or loop.orelse is not None:
        return None
    guard = statements[-1]
    if isinstance(guard.orelse, cst.If):
        return None  # (an elif chain: not one test)
    index, lengths = _index_and_lengths(loop)
    if index is None:
        return None
    return None if (found := _compared_with_last(guard.test, index, lengths, code, static_of)) is None else (
        guard, found)


def _index_and_lengths(loop):
    """(the index variable's name, nodes for the number of turns) of `for i in range(n)` / `for i, ... in
    enumerate(items)` (n = len(items)) / `for i, ... in enumerate(zip(a, b))` (len(a), len(b)), else (None, ())."""
    iterable, target = loop.iter, loop.target
    if not _plain_call(iterable):
        return None, ()
    func = dotted_name(iterable.func)
    if func == "range" and len(iterable.args) == 1 and isinstance(target, cst.Name):
        return target.value, (iterable.args[0].value,)
    if func == "enumerate" and len(iterable.args) == 1 and isinstance(target, (cst.Tuple, cst.List)) and \
            target.elements and isinstance(target.elements[0].value, cst.Name):
        items = iterable.args[0].value
        zipped = [a.value for a in items.args] if _plain_call(items) and dotted_name(items.func) == "zip" else [items]
        return target.elements[0].value.value, tuple(cst.Call(func=cst.Name("len"), args=[cst.Arg(i)])
                                                     for i in zipped)
    return None, ()


def _plain_call(node):
    return isinstance(node, cst.Call) and node.args and not any(a.keyword is not None or a.star for a in node.args)


def _may_be_the_length(bound, lengths, code, static_of):
    """Whether `bound` is the number of turns: the same text as a length, or a number that no number porter knows
    contradicts. A loop over `enumerate(zip(self.patch_embeds, self.blocks))` that tests `i < len(self.depths) -
    1` (Twins) is taken at its word: the lists were built one item per depth, which porter does not count; had the
    author's test been anything but "not the last turn", torch would hand the next stage tokens where it convolves
    an image."""
    if any(code(bound) == code(length) for length in lengths):
        return True
    known = {n for n in [static_of(bound)] + [static_of(length) for length in lengths] if n is not None}
    return len(known) <= 1 and all(isinstance(n, int) and not isinstance(n, bool) for n in known)


def _compared_with_last(test, index, lengths, code, static_of):
    """True for a test that holds on every turn but the last, False for one that holds on the last turn only, None
    for any other test."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    left, operator, right = test.left, test.comparisons[0].operator, test.comparisons[0].comparator
    if _is_name(right, index) and not _is_name(left, index):  # `n - 1 != i`: as `i != n - 1`, mirrored
        left, right = right, left
        operator = {cst.LessThan: cst.GreaterThan(), cst.GreaterThan: cst.LessThan(),
                    cst.LessThanEqual: cst.GreaterThanEqual(), cst.GreaterThanEqual: cst.LessThanEqual()}.get(
            type(operator), operator)
    if _is_name(left, index) and _minus_one(right) is not None:  # `i <op> n - 1`
        bound = _minus_one(right)
    elif _plus_one_of(left, index) and not isinstance(operator, (cst.LessThanEqual, cst.GreaterThan)):
        bound = right  # `i + 1 <op> n`
    else:
        return None
    if not _may_be_the_length(bound, lengths, code, static_of):
        return None
    if isinstance(operator, (cst.NotEqual, cst.LessThan)):
        return True
    if isinstance(operator, (cst.Equal, cst.GreaterThanEqual)):
        return False
    return None


def _is_name(node, name):
    return isinstance(node, cst.Name) and node.value == name


def _minus_one(node):
    """`n` of `n - 1`, else None."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Subtract) and isinstance(
            node.right, cst.Integer) and node.right.value == "1":
        return node.left
    return None


def _plus_one_of(node, index):
    return isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add) and (
        _is_name(node.left, index) and isinstance(node.right, cst.Integer) and node.right.value == "1" or
        _is_name(node.right, index) and isinstance(node.left, cst.Integer) and node.left.value == "1")
