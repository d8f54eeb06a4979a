"""Layers whose output forward views as an image: a decoder's `self.fc(z).view(-1, C, H, W)`.

VAE and GAN generators project a latent vector with a Linear and view the result as an image for the transposed
convolutions after it: `h = self.fc(z)`, `h = h.view(-1, self.channels, 4, 4)`. In torch's order that view hands the
convolutions an image they take channels-last: a Transpose. When the Linear's weight rows (and bias) are reordered
once at load time from (C, H, W) to (H, W, C), its output splits into the image held channels-last instead
(passes/calls.py `linear_viewed_as_image`, runtime/module.py `torch_image_rows`).

This module reads, from the class's source alone, which of its attributes qualify: every call of the attribute
outside `__init__` has its result viewed into an image (a view or reshape to 4 or 5 sizes written out), directly
(`self.fc(z).view(...)`) or through the name it is bound to, which the statements between may rebind by calls on
it (`h = torch.relu(h)`); and each view's channel size (its second) is one the port can evaluate at load time: a
number, `self.` attributes, arithmetic of them. A call whose result meets something else first keeps torch's order
(the attribute is not listed).
"""

import functools

import libcst as cst

from porter.frontend.walk import descendants
from porter.passes.order_wanted import VIEWS, FirstUse

# elementwise functions a projection may go through before its view (`F.relu(self.fc(z)).view(...)`)
ACTIVATIONS = frozenset(("relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "sigmoid",
                         "tanh", "hardswish", "hardtanh", "softplus", "dropout", "prelu"))
IMAGE_RANKS = (4, 5)
SHAPE_ATTRIBUTES = ("shape", "size", "dtype", "device")


@functools.lru_cache(maxsize=256)
def image_views(class_node):
    """{attribute: the cst expression of the channel size its output is viewed with} for the attributes of the
    class (a cst.ClassDef) whose every call outside `__init__` is viewed into an image."""
    calls, viewed = {}, {}
    for method in class_node.body.body:
        if not isinstance(method, cst.FunctionDef) or method.name.value == "__init__":
            continue
        finder = _Reads()
        method.visit(finder)
        for attribute, count in finder.reads.items():
            calls[attribute] = calls.get(attribute, 0) + count
        for attribute, channels in _viewed_calls(method):
            viewed.setdefault(attribute, []).append(channels)
    found = {}
    for attribute, sizes in viewed.items():
        texts = {_code(size) for size in sizes}
        if len(sizes) == calls.get(attribute) and len(texts) == 1 and _load_time(sizes[0]):
            found[attribute] = sizes[0]
    return found


def _viewed_calls(method):
    """(attribute, channel size) for each `self.attribute(...)` call in `method` whose result is viewed into an
    image."""
    found = []
    for node in descendants(method):
        if isinstance(node, cst.Call):  # self.fc(z).view(-1, C, H, W), F.relu(self.fc(z)).view(...)
            receiver = _view_receiver(node)
            while isinstance(receiver, cst.Call) and _activation(receiver):
                receiver = receiver.args[0].value  # (an activation on it first)
            attribute = _own_call(receiver) if receiver is not None else None
            if attribute is not None and _channel_size(node) is not None:
                found.append((attribute, _channel_size(node)))
        if isinstance(node, (cst.IndentedBlock, cst.Module)):
            statements = list(node.body)
            for index, statement in enumerate(statements):
                bound = _bound_call(statement)
                if bound is not None:
                    channels = _viewed_next(statements[index + 1:], bound[0])
                    if channels is not None:
                        found.append((bound[1], channels))
    return found


def _name_assignment(statement):
    """(name, value) of a statement that is one `name = value`, else None."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and
            isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1 and
            isinstance(statement.body[0].targets[0].target, cst.Name)):
        return None
    return statement.body[0].targets[0].target.value, statement.body[0].value


def _bound_call(statement):
    """(name, attribute) of `name = self.attribute(...)`, else None."""
    assigned = _name_assignment(statement)
    attribute = _own_call(assigned[1]) if assigned is not None else None
    return (assigned[0], attribute) if attribute is not None else None


def _viewed_next(statements, name):
    """The channel size of the view into an image that the statements make of `name` first, the name possibly
    rebound before by activations of it (`name = F.relu(name)`) and read nowhere after the view; None when it is
    used otherwise (read again after the view, the projected vector would go back to torch's order there: a
    Transpose for the one saved)."""
    for index, statement in enumerate(statements):
        use = FirstUse(name)
        statement.visit(use)
        if not use.found:
            continue
        view = use.call if use.call is not None and not use.rearranged and use.call.func.attr.value in VIEWS \
            else None
        if use.call is not None and view is None:
            return None  # (a permute of it first)
        if view is not None:
            binds = _binds(statement, name)
            reads = _value_reads(statement, name) - binds
            if reads != 1 or not binds and _read_later(statements[index + 1:], name):
                return None
            return _channel_size(view)
        if not _rebinds_by_call(statement, name):
            return None
    return None


def _read_later(statements, name):
    """Whether one of `statements` reads `name` before one binds it anew."""
    for statement in statements:
        if _binds(statement, name):
            return _value_reads(statement.body[0].value, name) > 0
        if _value_reads(statement, name):
            return True
    return False


def _value_reads(node, name):
    """How often `node` reads `name` other than for its shape (`x.shape[0]`, `x.size(0)`: the same in any order)."""
    shape_reads = {id(n.value) for n in descendants(node) if isinstance(n, cst.Attribute) and
                   n.attr.value in SHAPE_ATTRIBUTES and isinstance(n.value, cst.Name)}
    return sum(isinstance(n, cst.Name) and n.value == name and id(n) not in shape_reads for n in descendants(node))


def _binds(statement, name):
    """Whether `statement` is `name = ...`."""
    assigned = _name_assignment(statement)
    return assigned is not None and assigned[0] == name


def _rebinds_by_call(statement, name):
    """Whether `statement` is `name = act(name, ...)`, an activation (or a dropout) of the projected vector."""
    assigned = _name_assignment(statement)
    if assigned is None:
        return False
    target, value = assigned
    return target == name and isinstance(value, cst.Call) and \
        _activation(value) and isinstance(value.args[0].value, cst.Name) and value.args[0].value.value == name and \
        not any(_mentions(a.value, name) for a in value.args[1:])


def _activation(call):
    """Whether `call` applies a function of ACTIVATIONS (`F.relu`, `torch.tanh`, `x.sigmoid` aside) to its first
    positional argument: elementwise, it keeps the projected vector's order."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    own = isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
    return name in ACTIVATIONS and not own and bool(call.args) and not call.args[0].star and \
        call.args[0].keyword is None


def _view_receiver(call):
    func = call.func
    return func.value if isinstance(func, cst.Attribute) and func.attr.value in VIEWS else None


def _channel_size(view):
    """The second size of a view written out to an image's rank (`view(-1, C, H, W)`, `reshape((b, C, h, w))`)."""
    args = view.args
    if len(args) == 1 and isinstance(args[0].value, (cst.Tuple, cst.List)) and args[0].keyword is None:
        sizes = [element.value for element in args[0].value.elements
                 if not isinstance(element, cst.StarredElement)]
        if len(sizes) != len(args[0].value.elements):
            return None
    else:
        if any(a.star or a.keyword is not None for a in args):
            return None
        sizes = [a.value for a in args]
    return sizes[1] if len(sizes) in IMAGE_RANKS else None


def _own_call(node):
    """`attribute` for a call `self.attribute(x)` of one positional argument, else None."""
    if not (isinstance(node, cst.Call) and len(node.args) == 1 and not node.args[0].star and
            node.args[0].keyword is None):
        return None
    func = node.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        return func.attr.value
    return None


def _load_time(node):
    """Whether the port can evaluate `node` at load time: integers, `self.` attribute chains, + - * // of them."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.Attribute):
        value = node.value
        while isinstance(value, cst.Attribute):
            value = value.value
        return isinstance(value, cst.Name) and value.value == "self"
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Power)) and \
            _load_time(node.left) and _load_time(node.right)
    return False


def _mentions(node, name):
    return any(isinstance(n, cst.Name) and n.value == name for n in descendants(node))


def _code(node):
    return cst.Module([]).code_for_node(node)


class _Reads(cst.CSTVisitor):
    """How often each `self.attribute` is read."""

    def __init__(self):
        self.reads = {}

    def visit_Attribute(self, node):
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            self.reads[node.attr.value] = self.reads.get(node.attr.value, 0) + 1
