"""Buffers a class uses only as a functional convolution's weight: held as a Conv layer holds its kernel.

An antialiased downsampling layer (Zhang's BlurPool, timm's BlurPool2d) registers a fixed filter in torch's
(O, I/g, k...) order and convolves with it: `self.register_buffer("filt", filt[None, None].repeat(C, 1, 1, 1))`, then
`F.conv2d(self.pad(x), self.filt, stride=2, groups=C)`. Held in torch's order, the port would transpose the filter on
every call. A buffer that the class's code reads only as the weight of `F.conv1d/2d/3d` (and registers once, under a
literal name that no other code of the file reads as an attribute) is stored instead as the runtime's Conv layers
store their kernels, (k..., I/g, O): `register_buffer(..., kernel=True)` transposes it once when it is made, the
state_dict's torch array is transposed on load (its `porter_torch_view`), and every convolution takes it as it lies.
"""

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.walk import walk

# functional convolutions -> the rank of their weight (O, I/g, k...)
CONV_FUNCTIONS = {"torch.nn.functional.conv1d": 3, "torch.conv1d": 3, "torch.nn.functional.conv2d": 4,
                  "torch.conv2d": 4, "torch.nn.functional.conv3d": 5, "torch.conv3d": 5}


def kernel_buffers(source, info):
    """{buffer name: weight rank} of the buffers class `info` uses only as a functional convolution's weight (see
    the module docstring); answered once per class."""
    cache = source.__dict__.setdefault("_kernel_buffers", {})
    if info.name not in cache:
        cache[info.name] = _kernel_buffers(source, info)
    return cache[info.name]


def _kernel_buffers(source, info):
    if any(info.name in other.bases for other in source.classes.values()):
        return {}  # (a subclass's code may read the buffer otherwise)
    registered, others = _registered(info.node)
    if not registered:
        return {}
    finder = _Uses(source, set(registered))
    walk(info.node.body, finder)
    found = {}
    for name in registered:
        ranks = finder.weight_ranks.get(name, set())
        if len(ranks) == 1 and name not in finder.other_reads and name not in others and \
                name not in finder.assigned and not _read_elsewhere(source, info, name):
            found[name] = ranks.pop()
    return found


def _registered(class_node):
    """(names registered once by `self.register_buffer("name", value)`, names registered more than once)."""
    counts = {}

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "register_buffer" and \
                    dotted_name(func.value) == "self" and node.args and isinstance(node.args[0].value, cst.SimpleString):
                name = node.args[0].value.evaluated_value
                counts[name] = counts.get(name, 0) + 1

    walk(class_node.body, Finder())
    return [n for n, c in counts.items() if c == 1], {n for n, c in counts.items() if c > 1}


class _Uses(cst.CSTVisitor):
    """Reads of `self.<name>` for the buffers `names`: those that are a functional convolution's weight (the
    weight's ranks), the names read any other way, and those assigned as attributes."""

    def __init__(self, source, names):
        super().__init__()
        self.source, self.names = source, names
        self.weight_ranks, self.other_reads, self.assigned = {}, set(), set()
        self.weights = set()  # ids of the `self.<name>` nodes that are a convolution's weight

    def visit_Call(self, node):
        rank = CONV_FUNCTIONS.get(self.source.imports.resolve(node.func) or "")
        if rank is None:
            return
        positional = [a for a in node.args if a.keyword is None]
        weight = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "weight"),
                      positional[1].value if len(positional) > 1 and not positional[1].star else None)
        name = _own_attribute(weight)
        if name in self.names:
            self.weights.add(id(weight))
            self.weight_ranks.setdefault(name, set()).add(rank)

    def visit_Attribute(self, node):
        name = _own_attribute(node)
        if name in self.names and id(node) not in self.weights:
            self.other_reads.add(name)

    def visit_AssignTarget(self, node):
        name = _own_attribute(node.target)
        if name in self.names:
            self.assigned.add(name)


def _own_attribute(node):
    """`name` of `self.name`, else None."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


def _read_elsewhere(source, info, name):
    """Whether code of the file outside class `info` reads an attribute `name` of another object (`model.blur.filt`;
    another class's own `self.filt` is its own)."""
    bodies = [other.node.body for other in source.classes.values() if other is not info] + \
        [function.body for function in source.functions.values()]
    return any(_reads_attribute(body, name) for body in bodies)


def _reads_attribute(body, name):
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, node):
            if node.attr.value == name and _own_attribute(node) is None:  # (another class's own `self.filt`)
                found.append(node)

    walk(body, Finder())
    return bool(found)
