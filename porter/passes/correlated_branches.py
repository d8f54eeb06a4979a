"""Branches taken together: two `if`s of one test in one block, whose paths continue each other.

timm's SplitAttn (ResNeSt) writes `if self.radix > 1: x = x.reshape(B, radix, C, H, W); x_gap = x.sum(1)` with an
`else` keeping the 4-d image, and further down `if self.radix > 1: out = (x * attn.reshape(...)).sum(1)`. The two
paths leave `x` in different layouts (a 5-d split of the channels, a 4-d image), so the join converted it back to
torch's layout, and the later branch converted the result again: two Transposes a block. Yet the test cannot change
between the two `if`s: a run that takes the first path of one takes the first path of the other. Where the next
statement reading such a variable is that later `if`, the variable stays as each path left it, and each path of the
later `if` takes it as the same path of the first left it (statements.py `merge` and `_stmt_If`).

The test must be one that nothing between can change: names, attributes, constants, comparisons and boolean
operators only (no call, subscript or assignment expression); none of its names bound by the first `if` or by a
statement between; no attribute assigned between; and nothing between leaves the block early (return, break,
continue), so the later `if` is reached whenever the first is.
"""

import libcst as cst

from porter.frontend.names import names_bound_in, names_in
from porter.frontend.walk import descendants, has_escape

_UNSTABLE = (cst.Call, cst.Subscript, cst.NamedExpr, cst.Await, cst.Yield, cst.Lambda, cst.ListComp, cst.SetComp,
             cst.DictComp, cst.GeneratorExp)


def later_branch_of_same_test(statement, following, name, code_of, mentioned):
    """The `if` among `following` (the statements after `statement`, an `if`, in its block) of the same test, when
    it is the next statement to mention variable `name` and each of its paths continues the same path of
    `statement`; else None. `code_of(node)`: a node's source text; `mentioned(statement)`: the names it mentions."""
    if not _plain_branches(statement) or not _stable(statement.test):
        return None
    test_code, test_names = code_of(statement.test), names_in(statement.test)
    if test_names & names_bound_in(statement, loop_targets=True):
        return None
    for later in following:
        if isinstance(later, cst.If) and _plain_branches(later) and code_of(later.test) == test_code:
            return later
        if name in mentioned(later) or test_names & names_bound_in(later, loop_targets=True) or \
                _assigns_attribute(later) or has_escape(later):
            return None
    return None


def _plain_branches(statement):
    """An `if` with no `elif` (an `else` or none)."""
    return isinstance(statement, cst.If) and (statement.orelse is None or isinstance(statement.orelse, cst.Else))


def _stable(test):
    return not any(isinstance(node, _UNSTABLE) for node in descendants(test))


def _assigns_attribute(statement):
    for node in descendants(statement):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else \
            [node.target] if isinstance(node, (cst.AugAssign, cst.AnnAssign)) else []
        if any(isinstance(target, (cst.Attribute, cst.Subscript)) for target in targets):
            return True
    return False
