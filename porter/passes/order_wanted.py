"""The axis order the statements after a branch want a variable in: when the first thing they do with it is a
transpose or permute with literal dims (`x = x.transpose(1, 2).reshape(B, N, C)` after attention's if/else of SDPA
or the einsums written out), the order that makes that permute a relabelling, so the branches can write their
einsums in it."""

import libcst as cst

PERMUTES = ("transpose", "permute", "swapaxes", "swapdims")
VIEWS = ("view", "reshape")


def order_wanted_next(statements, name, rank):
    """The stored order (torch dims) `name` should have for its first use in `statements` to move no data, or None
    when that use is no transpose/permute of literal dims (or the name is rebound first). A (N, C, L) result whose
    first use is a view to more dims (`out.view(b, c, h, w)`, SAGAN's attention output back to an image) wants
    (N, L, C): the view then splits L into the image's spatial axes held channels-last."""
    for statement in statements:
        finder = FirstUse(name)
        statement.visit(finder)
        if finder.found:
            if finder.call is None:
                return None
            if finder.rearranged:
                return _rearranged_order(finder.call, rank)
            if finder.call.func.attr.value in VIEWS:
                return [0, 2, 1] if rank == 3 and _splits_last_dim(finder.call) else None
            return _order(finder.call, rank)
    return None


def _rearranged_order(call, rank):
    """The order einops' `rearrange(name, "b h n d -> b n (h d)")` reads the left side's axes in on its right side
    (axes only moved and merged, none split or new): stored so, the rearrange is a reshape."""
    pattern = call.args[1].value.evaluated_value if len(call.args) > 1 and isinstance(
        call.args[1].value, cst.SimpleString) else ""
    left, _, right = pattern.partition("->")
    left_axes, right_axes = left.split(), right.replace("(", " ").replace(")", " ").split()
    if len(left_axes) != rank or "(" in left or sorted(left_axes) != sorted(right_axes) or \
            len(set(left_axes)) != rank:
        return None
    order = [left_axes.index(axis) for axis in right_axes]
    return order if order != list(range(rank)) else None


def _splits_last_dim(call):
    """Whether a view/reshape call of a rank-3 tensor names four or more sizes one by one (no starred sizes, no
    tuple): (N, C, L) to (N, C, H, W...)."""
    return len(call.args) >= 4 and all(a.keyword is None and not a.star for a in call.args)


class FirstUse(cst.CSTVisitor):
    """Finds the first read of Name `name` in a statement, and the call `name.<permute>(...)` it is the receiver of."""

    def __init__(self, name):
        self.name, self.found, self.call, self.rearranged = name, False, None, False

    def visit_Assign(self, node):
        """The value is read before the targets are bound."""
        node.value.visit(self)
        for target in node.targets:
            target.visit(self)
        return False

    def visit_Call(self, node):
        if self.found:
            return False
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self.name \
                and func.attr.value in PERMUTES + VIEWS:
            self.found, self.call = True, node
            return False
        callee = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) \
            else None
        if callee == "rearrange" and node.args and isinstance(node.args[0].value, cst.Name) and \
                node.args[0].value.value == self.name:  # einops' `rearrange(name, "b h n d -> b n (h d)")`
            self.found, self.call, self.rearranged = True, node, True
            return False
        return True

    def visit_Name(self, node):
        if not self.found and node.value == self.name:
            self.found = True
        return False


def _order(call, rank):
    """The permutation `call` (a transpose/permute of a tensor of `rank`) applies, as a list of torch dims; None when
    its dims are not integer literals."""
    dims = []
    for arg in call.args:
        if arg.keyword is not None or arg.star:
            return None
        value = arg.value
        if isinstance(value, (cst.List, cst.Tuple)):
            items = [e.value for e in value.elements]
        else:
            items = [value]
        for item in items:
            number = _integer(item)
            if number is None:
                return None
            dims.append(number + rank if number < 0 else number)
    if call.func.attr.value == "permute":
        return dims if sorted(dims) == list(range(rank)) else None
    if len(dims) != 2 or not all(0 <= d < rank for d in dims):
        return None
    order = list(range(rank))
    order[dims[0]], order[dims[1]] = order[dims[1]], order[dims[0]]
    return order


def _integer(node):
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(
            node.expression, cst.Integer):
        return -int(node.expression.value)
    return None
