"""The Gluon frontend: MXNet Gluon `Block`/`HybridBlock` classes read as the same class structure torch's
`nn.Module`s give the translator.

What Gluon spells differently is normalised here, once, so that the passes stay framework-neutral:
- `hybrid_forward(self, F, x, ...)` is the class's forward; `F` (a parameter naming `mx.nd` or `mx.sym`) becomes
  an alias of the op namespace `mxnet.ndarray`, whose rules live in porter/rules/gluon_*.py;
- `with self.name_scope():` (and `with self.features.name_scope():`) only name parameters in mxnet: their bodies
  are read as if they were written without the `with`;
- a Block's own parameters (`self.weight = self.params.get("weight", shape=..., init=...)`, `gluon.Parameter(...)`,
  `self.params.get_constant(...)`) are what mxnet passes to `hybrid_forward` by keyword after the inputs: those
  parameters of hybrid_forward become `weight = self.weight` at the top of the body, and `self.weight.data()`
  (Gluon 2 style `forward`) reads as `self.weight`; `self.params.get(...)` itself is read as a call of
  `mxnet.gluon.Parameter` (`get_constant`: `mxnet.gluon.Constant`), whose rules live in porter/rules/gluon_ops.py.
The rewritten nodes take the source positions of the nodes they replace, so lines stay the source's.
"""

import libcst as cst

from porter.frontend.imports import dotted_name

# Canonical ids (after imports.CANONICAL_PREFIXES) of the classes a Gluon model class derives from.
BLOCK_BASES = {"mxnet.gluon.Block", "mxnet.gluon.HybridBlock", "mxnet.gluon.nn.Block",
               "mxnet.gluon.nn.HybridBlock"}
CONTAINER_BASES = {"mxnet.gluon.nn.Sequential": "sequential", "mxnet.gluon.nn.HybridSequential": "sequential"}
OP_NAMESPACE = "mxnet.ndarray"  # what `F` in hybrid_forward, `mx.nd` and `mx.sym` resolve to
PARAMETER = "mxnet.gluon.Parameter"
CONSTANT = "mxnet.gluon.Constant"
PARAMETER_CLASSES = {PARAMETER, CONSTANT, "mxnet.gluon.parameter.Parameter", "mxnet.gluon.parameter.Constant"}
# the names `self.params.get(...)`/`self.params.get_constant(...)` are rewritten to call (import aliases of the
# parameter classes, registered in the file's import table; never emitted: the rules write the port's code)
PARAMS_GET = {"get": ("porter_gluon_params_get__", PARAMETER),
              "get_constant": ("porter_gluon_params_get_constant__", CONSTANT)}


def is_gluon(canonical):
    return canonical is not None and (canonical == "mxnet" or canonical.startswith("mxnet."))


def op_namespace_parameter(method):
    """The name of hybrid_forward's op-namespace parameter (`F`), or None."""
    params = list(method.params.params)
    return params[1].name.value if len(params) > 1 else None


def normalised_methods(methods, positions, imports=None):
    """Gluon methods as the translator reads them: `hybrid_forward` as `forward` without its `F` parameter (a
    class defining `forward` itself keeps it) and with the Block's own parameters read from `self`, `name_scope`
    blocks unwrapped, `self.params.get(...)` as a parameter construction and `self.<parameter>.data()` as the
    parameter. `positions` gains the new nodes; `imports` (the file's ImportTable) the parameter aliases."""
    if imports is not None:
        for alias, canonical in PARAMS_GET.values():
            imports.aliases.setdefault(alias, canonical)
    parameters = _own_parameters(methods.get("__init__"), imports)
    result = {}
    for name, method in methods.items():
        method = _unwrap_name_scopes(method, positions)
        method = _rewrite(method, positions, _ParameterReads(parameters, positions))
        if name == "hybrid_forward":
            if "forward" in methods:
                continue
            params = list(method.params.params)
            kept = [params[0]] + params[2:] if len(params) > 1 else params
            taken = [p for p in kept[1:] if p.name.value in parameters]
            kept = [p for p in kept if p not in taken]
            if kept and taken:  # the parameter list's last comma goes with the parameters dropped after it
                kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            renamed = method.with_changes(name=cst.Name("forward"), params=method.params.with_changes(params=kept),
                                          body=_read_parameters_first(method.body, taken, positions))
            positions[renamed] = positions.get(method)
            name, method = "forward", renamed
        result[name] = method
    return result


def is_parameter_construction(call, imports):
    """Whether `call` builds a Gluon Parameter: `self.params.get(...)`, `self.params.get_constant(...)`,
    `gluon.Parameter(...)` or `gluon.Constant(...)` however imported."""
    if not isinstance(call, cst.Call):
        return False
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in PARAMS_GET and dotted_name(func.value) == "self.params":
        return True
    return imports is not None and imports.resolve(func) in PARAMETER_CLASSES


def _own_parameters(init, imports):
    """Attribute names `__init__` assigns Gluon Parameters to (`self.weight = self.params.get("weight", ...)`)."""
    if init is None:
        return frozenset()
    found = set()

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node):
            if is_parameter_construction(node.value, imports):
                for target in node.targets:
                    name = dotted_name(target.target)
                    if name is not None and name.startswith("self.") and name.count(".") == 1:
                        found.add(name[5:])

    init.visit(Finder())
    return frozenset(found)


class _ParameterReads(cst.CSTTransformer):
    """`self.params.get(...)` -> a call of the Parameter alias; `self.<parameter>.data(...)` -> `self.<parameter>`."""

    def __init__(self, parameters, positions):
        super().__init__()
        self.parameters, self.positions = parameters, positions

    def leave_Call(self, original, updated):
        func = updated.func
        if not isinstance(func, cst.Attribute):
            return updated
        if func.attr.value in PARAMS_GET and dotted_name(func.value) == "self.params":
            return updated.with_changes(func=cst.Name(PARAMS_GET[func.attr.value][0]))
        if func.attr.value == "data" and len(updated.args) <= 1:  # `.data()`, `.data(ctx)`
            name = dotted_name(func.value)
            if name is not None and name.startswith("self.") and name[5:] in self.parameters:
                return func.value
        return updated

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        if result is not original and isinstance(result, cst.CSTNode) and original in self.positions:
            self.positions.setdefault(result, self.positions[original])
        return result


def _rewrite(method, positions, transformer):
    return method.visit(transformer) if _mentions_parameters(method) else method


def _mentions_parameters(method):
    text = cst.Module(body=[]).code_for_node(method)
    return "self.params." in text or ".data(" in text


def _read_parameters_first(body, taken, positions):
    """hybrid_forward's body with `name = self.name` first (after a docstring) for each parameter in `taken`."""
    if not taken or not isinstance(body, cst.IndentedBlock):
        return body
    reads = []
    for param in taken:
        name = param.name.value
        statement = cst.SimpleStatementLine(body=[cst.Assign(
            targets=[cst.AssignTarget(target=cst.Name(name))],
            value=cst.Attribute(value=cst.Name("self"), attr=cst.Name(name)))])
        position = positions.get(param)
        if position is not None:
            positions[statement] = position
            for node in (statement.body[0], statement.body[0].value, statement.body[0].targets[0].target):
                positions[node] = position
        reads.append(statement)
    statements = list(body.body)
    first = statements[0] if statements else None
    docstring = isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr) and isinstance(
        first.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    index = 1 if docstring else 0
    return body.with_changes(body=statements[:index] + reads + statements[index:])


def _is_name_scope(item):
    call = item.item
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
        call.func.attr.value == "name_scope" and not call.args and dotted_name(call.func.value) is not None


class _NameScopeUnwrapper(cst.CSTTransformer):
    """Replaces `with <x>.name_scope():` statements by their bodies; new nodes inherit the old positions."""

    def __init__(self, positions):
        super().__init__()
        self.positions = positions

    def leave_With(self, original, updated):
        if len(updated.items) == 1 and _is_name_scope(updated.items[0]) and \
                isinstance(updated.body, cst.IndentedBlock):
            return cst.FlattenSentinel(updated.body.body)
        return updated

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        if result is not original and isinstance(result, cst.CSTNode) and original in self.positions:
            self.positions.setdefault(result, self.positions[original])
        return result


def _unwrap_name_scopes(method, positions):
    if not _mentions_name_scope(method):
        return method
    return method.visit(_NameScopeUnwrapper(positions))


def _mentions_name_scope(method):
    found = []

    class Finder(cst.CSTVisitor):
        def visit_With(self, node):
            if any(_is_name_scope(item) for item in node.items):
                found.append(node)

    method.visit(Finder())
    return bool(found)
