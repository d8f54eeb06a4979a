"""Activations that overwrite the tensor they are handed, and the name that still holds it.

torch's in-place activations (`nn.ReLU(inplace=True)`, `F.relu(x, inplace=True)`, `F.relu_(x)`) write their result
into their input: every name bound to that tensor sees it. Code written outside this project relies on it, often
without meaning to: a block whose `self.rep = nn.Sequential(nn.ReLU(inplace=True), ...)` runs on `inp` and then
adds `inp` back adds the activated input; a bare `F.relu(x, inplace=True)` statement activates `x`. TensorFlow
tensors are immutable, so the port rebinds the name to the activation's result where torch would have overwritten
it and the name is read again (statements.py): `out = self.relu(x)` is followed by `x = out`, `y = self.rep(x)`
whose Sequential starts with such an activation by `x = self.rep[0](x)` (the activation of the input, computed on
the input as it was), a bare call becomes `x = <the call>`.

This module answers, from the source, which calls do so: a class's attribute every construction of which is an
in-place activation (or a Sequential written out whose first layer is one), and the functional forms; and which
other names hold the same tensor (`residual = x` before `x = self.relu(x)`: torch overwrites `residual` too).
"""

import libcst as cst

from porter.frontend.arguments import bound_argument
from porter.frontend.names import names_bound_in
from porter.frontend.walk import descendants
from porter.passes.elementwise_classes import attribute_constructions

# activation class -> the position of its `inplace` parameter
IN_PLACE_CLASSES = {
    "torch.nn.ReLU": 0, "torch.nn.ReLU6": 0, "torch.nn.SELU": 0, "torch.nn.SiLU": 0, "torch.nn.Mish": 0,
    "torch.nn.Hardswish": 0, "torch.nn.Hardsigmoid": 0, "torch.nn.LeakyReLU": 1, "torch.nn.ELU": 1,
    "torch.nn.CELU": 1, "torch.nn.Dropout": 1, "torch.nn.Dropout2d": 1, "torch.nn.Dropout3d": 1,
    "torch.nn.AlphaDropout": 1, "torch.nn.Hardtanh": 2, "torch.nn.Threshold": 2, "torch.nn.RReLU": 2,
}
# functional activations taking `inplace=` (the parameter's position), and those in place by name
IN_PLACE_FUNCTIONS = {
    "torch.nn.functional.relu": 1, "torch.nn.functional.relu6": 1, "torch.nn.functional.selu": 1,
    "torch.nn.functional.silu": 1, "torch.nn.functional.mish": 1, "torch.nn.functional.hardswish": 1,
    "torch.nn.functional.hardsigmoid": 1, "torch.nn.functional.leaky_relu": 2, "torch.nn.functional.elu": 2,
    "torch.nn.functional.celu": 2, "torch.nn.functional.hardtanh": 3, "torch.nn.functional.threshold": 3,
    "torch.nn.functional.dropout": 3, "torch.nn.functional.dropout2d": 3, "torch.nn.functional.rrelu": 4,
}
ALWAYS_IN_PLACE = frozenset({"torch.nn.functional.relu_", "torch.relu_", "torch.nn.functional.leaky_relu_",
                             "torch.nn.functional.elu_", "torch.nn.functional.hardtanh_",
                             "torch.nn.functional.threshold_", "torch.nn.functional.rrelu_", "torch.selu_",
                             "torch.nn.functional.selu_", "torch.celu_", "torch.nn.functional.celu_"})


def in_place_call(source, info, call):
    """How `call` overwrites its first argument, a plain name: "result" (the call's result is what the name then
    holds: an in-place activation module or function), "first layer" (a Sequential attribute whose first layer is
    one: the name then holds that layer applied to it), "maybe first layer" (a Sequential built from a list that
    holds one: so where it leads), or None."""
    if not (isinstance(call, cst.Call) and call.args and isinstance(call.args[0].value, cst.Name) and
            not call.args[0].star and call.args[0].keyword is None):
        return None
    func = call.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" and \
            info is not None:
        built = _constructions(source, info).get(func.attr.value)
        if not built:
            return None
        if all(_in_place_construction(source, node) for node in built):
            return "result"
        if all(_sequential_starting_in_place(source, info, node) for node in built):
            return "first layer"
        if any(_sequential_maybe_starting_in_place(source, info, node) for node in built):
            return "maybe first layer"
        return None
    canonical = source.imports.resolve(func)
    if canonical in ALWAYS_IN_PLACE:
        return "result"
    if canonical in IN_PLACE_FUNCTIONS and _true(bound_argument(call, IN_PLACE_FUNCTIONS[canonical], "inplace")):
        return "result"
    return None


def _constructions(source, info):
    init = info.find_method("__init__")
    if init is None:
        return {}
    cache = source.__dict__.setdefault("_in_place_constructions", {})
    if info.name not in cache:
        cache[info.name] = attribute_constructions(init)
    return cache[info.name]


def _in_place_construction(source, node):
    if not isinstance(node, cst.Call):
        return False
    canonical = source.imports.resolve(node.func)
    return canonical in IN_PLACE_CLASSES and _true(bound_argument(node, IN_PLACE_CLASSES[canonical], "inplace"))


def _sequential_starting_in_place(source, info, node):
    """`nn.Sequential(nn.ReLU(inplace=True), ...)`, `nn.Sequential(self.relu, ...)` of an in-place `self.relu`."""
    if not (isinstance(node, cst.Call) and source.imports.resolve(node.func) == "torch.nn.Sequential" and node.args):
        return False
    first = node.args[0]
    return not first.star and first.keyword is None and _in_place_layer(source, info, first.value)


def _sequential_maybe_starting_in_place(source, info, node):
    """`nn.Sequential(*rep)` of a list the constructor fills, one of whose layers is an in-place activation (Aligned
    Xception's blocks: `rep.append(self.relu)` where `start_with_relu`): whether it leads is known per instance only
    (the runtime's `in_place_head` tells)."""
    if not (isinstance(node, cst.Call) and source.imports.resolve(node.func) == "torch.nn.Sequential" and
            len(node.args) == 1 and node.args[0].star == "*" and isinstance(node.args[0].value, cst.Name)):
        return False
    return any(_in_place_layer(source, info, layer) for layer in _container_layers(source, info, node))


def _layers_put_in(init, name):
    """The expressions the constructor puts in its local list `name`: `name = [a, b]`, `name.append(a)`,
    `name.insert(0, a)`, `name += [a]`, `name.extend([a])`."""
    for node in descendants(init.body):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else \
            [node.target] if isinstance(node, cst.AugAssign) else []
        if any(isinstance(t, cst.Name) and t.value == name for t in targets) and isinstance(node.value, cst.List):
            yield from (e.value for e in node.value.elements)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(
                node.func.value, cst.Name) and node.func.value.value == name and node.args:
            if node.func.attr.value == "append":
                yield node.args[0].value
            elif node.func.attr.value == "insert" and len(node.args) == 2:
                yield node.args[1].value
            elif node.func.attr.value == "extend" and isinstance(node.args[0].value, cst.List):
                yield from (e.value for e in node.args[0].value.elements)


def _in_place_layer(source, info, node):
    """An in-place activation built here, or `self.<attribute>` every construction of which is one."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        built = _constructions(source, info).get(node.attr.value)
        return bool(built) and all(_in_place_construction(source, b) for b in built)
    return _in_place_construction(source, node)


def _true(node):
    return isinstance(node, cst.Name) and node.value == "True"


def aliases_after(groups, statement):
    """The groups of names holding one tensor after `statement` runs, given `groups` (a tuple of frozensets) before
    it: a plain `a = b` puts `a` beside `b`; a name the statement binds otherwise (in any of its branches or loops)
    leaves its group."""
    bound = names_bound_in(statement, loop_targets=True)
    kept = [group - bound for group in groups]
    copied = _plain_copy(statement)
    if copied is not None:
        target, source = copied
        joined = next((group for group in kept if source in group), frozenset({source}))
        kept = [group for group in kept if group is not joined] + [joined | {target}]
    return tuple(group for group in kept if len(group) > 1)


def _plain_copy(statement):
    """(a, b) for a statement `a = b` of two plain names, else None."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
            and isinstance(small.value, cst.Name) and small.targets[0].target.value != small.value.value:
        return small.targets[0].target.value, small.value.value
    return None


# nodes whose evaluation consumes the values of their operands (a read inside one that runs before an in-place call
# sees the tensor as it was); attribute reads and subscripts pass the tensor on (a view sees the later write)
_CONSUMERS = (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.BooleanOperation)


def read_in_same_statement(source, info, small, aliases):
    """Where statement `small` both calls an in-place activation on a name (or a Sequential leading with one) and
    reads that name (or a name holding the same tensor, `aliases`) elsewhere: `return self.rep(x) + x`, `out =
    self.skip(x) + self.rep(x) + x`. torch's later reads see the overwritten tensor; a read whose value an operation
    consumed before the call ran (`self.skip(x)` above) saw it as it was. (call, reads after, reads before), the
    reads as Name nodes of `small`, or None where no read follows such a call."""
    value = getattr(small, "value", None)
    if not isinstance(small, (cst.Assign, cst.AugAssign, cst.Return, cst.Expr)) or value is None:
        return None
    call = next((node for node in descendants(value) if isinstance(node, cst.Call) and
                 in_place_call(source, info, node) is not None), None)
    if call is None:
        return None
    name = call.args[0].value.value
    holders = set().union({name}, *(group for group in aliases if name in group))
    own = call.args[0].value
    parents = _parents(small)
    reads = [node for node in descendants(small) if isinstance(node, cst.Name) and node.value in holders and
             node is not own and _read(node, parents)]
    if not reads:
        return None
    positions = source.positions
    start = positions.get(call)
    before, after = [], []
    for read in reads:
        consumer = _consumer(read, parents, small)
        end = positions.get(consumer) if consumer is not None else None
        if consumer is not None and not any(node is call for node in descendants(consumer)) and \
                start is not None and end is not None and \
                (end.end.line, end.end.column) <= (start.start.line, start.start.column):
            before.append(read)
        else:
            after.append(read)
    return (call, after, before) if after else None


def _parents(root):
    """id(node) -> its parent, for the nodes below `root`."""
    return {id(child): node for node in descendants(root) for child in node.children}


def _read(name, parents):
    """Whether Name `name` is read as a variable (not an attribute's name, a keyword, an assignment's target; an
    augmented assignment's target is read: `x += self.rep(x)` adds to the overwritten `x`)."""
    parent = parents.get(id(name))
    if isinstance(parent, cst.Attribute) and parent.attr is name:
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is name:
        return False
    return not (isinstance(parent, cst.AssignTarget) and parent.target is name)


def _consumer(node, parents, root):
    parent = parents.get(id(node))
    while parent is not None and parent is not root:
        if isinstance(parent, _CONSUMERS):
            return parent
        parent = parents.get(id(parent))
    return None


def replaced(node, replacements):
    """`node` with each of its descendants that is a key of `replacements` (by identity) replaced by its value; the
    subtrees holding none of them are kept as they are (the same nodes: what was indexed about them still holds)."""
    return node.visit(_Replacer({id(old): new for old, new in replacements}))


class _Replacer(cst.CSTTransformer):
    """Replaces the nodes `targets` names by id (see `replaced`)."""

    def __init__(self, targets):
        super().__init__()
        self.targets = targets

    def on_visit(self, node):
        return id(node) not in self.targets and any(id(d) in self.targets for d in descendants(node))

    def on_leave(self, original_node, updated_node):
        return self.targets.get(id(original_node), updated_node)


def in_place_loop_head(source, info, statement):
    """`for layer in self.rep: y = layer(y)` over a ModuleList or Sequential of the constructor one of whose layers
    is an in-place activation: where it leads (known per instance: the runtime's `in_place_head` tells), torch's first
    turn overwrites the tensor `y` held before the loop, and every other name holding it. (the iterable, `y`), or
    None."""
    if not (isinstance(statement.target, cst.Name) and isinstance(statement.iter, cst.Attribute) and
            isinstance(statement.iter.value, cst.Name) and statement.iter.value.value == "self" and info is not None):
        return None
    built = _constructions(source, info).get(statement.iter.attr.value)
    if not built or not any(_in_place_layer(source, info, layer) for node in built
                            for layer in _container_layers(source, info, node)):
        return None
    layer = statement.target.value
    for node in descendants(statement.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == layer:
            handed = node.args[0].value if node.args and not node.args[0].star else None
            return (statement.iter, handed.value) if isinstance(handed, cst.Name) else None
    return None


def _container_layers(source, info, node):
    """The layers a construction of an `nn.Sequential` or `nn.ModuleList` is handed, where the source says:
    written out, or put in a local list of the constructor (`nn.Sequential(*layers)`, `nn.ModuleList(layers)`)."""
    if not isinstance(node, cst.Call):
        return []
    canonical = source.imports.resolve(node.func)
    if canonical not in ("torch.nn.Sequential", "torch.nn.ModuleList"):
        return []
    init = info.find_method("__init__")
    layers = []
    for arg in node.args:
        value = arg.value
        if arg.keyword is not None:
            continue
        if canonical == "torch.nn.ModuleList" and isinstance(value, (cst.List, cst.Tuple)):
            layers += [element.value for element in value.elements]
        elif isinstance(value, cst.Name) and (arg.star == "*" or canonical == "torch.nn.ModuleList"):
            layers += list(_layers_put_in(init, value.value)) if init is not None else []
        elif not arg.star:
            layers.append(value)
    return layers
