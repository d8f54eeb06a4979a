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
    init = info.find_method("__init__")
    return init is not None and any(_in_place_layer(source, info, layer)
                                    for layer in _layers_put_in(init, node.args[0].value.value))


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
