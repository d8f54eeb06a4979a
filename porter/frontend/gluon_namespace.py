"""Gluon's op namespace handed to helpers: `self.channel_shuffle(F, x, groups)` with `def channel_shuffle(self, F,
data, groups)`, `self.fixed_padding(x, F, k)` and `super().hybrid_forward(F, x)`.

hybrid_forward's `F` names `mx.nd` or `mx.sym`, both read as the op namespace `mxnet.ndarray` (whose rules write
the port's ops); a helper that takes it as a parameter uses it the same way. The port has no namespace object to
pass, so the parameter and the arguments that pass it are dropped: the helper's `F.reshape(...)` resolves to the op
namespace as hybrid_forward's does (the name is registered as its alias), and `super().hybrid_forward(F, x)`
becomes `super().forward(x)`, as hybrid_forward itself becomes `forward`.
"""

import libcst as cst

from porter.frontend.walk import walk

DEFAULT_NAMES = frozenset({"F"})  # what Gluon code calls the namespace everywhere (its documentation's spelling)


def namespace_parameters(function, names):
    """The parameters of `function` (not `self`, without a default) named in `names` that its body uses as the op
    namespace: as the base of an attribute (`F.reshape`) or passed on to another call."""
    candidates = {p.name.value for p in function.params.params if p.name.value in names and p.default is None}
    if not candidates:
        return frozenset()
    used = set()

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, node):
            if isinstance(node.value, cst.Name) and node.value.value in candidates:
                used.add(node.value.value)

        def visit_Arg(self, node):
            if node.keyword is None and not node.star and isinstance(node.value, cst.Name) and \
                    node.value.value in candidates:
                used.add(node.value.value)

    walk(function.body, Finder())
    return frozenset(used)


def without_namespace_arguments(function, names, positions, namespace=None):
    """`function` without the op-namespace arguments its calls pass (positional arguments that are a bare name the
    function holds the namespace in) and, for a helper, without the op-namespace parameters it takes; `namespace`:
    hybrid_forward's own namespace parameter (dropped where it becomes `forward`), None for other functions.
    `super().hybrid_forward(...)` calls `forward`. New nodes keep the old nodes' positions. Returns (function,
    names of the parameters dropped)."""
    dropped = namespace_parameters(function, names) if namespace is None else frozenset()
    scope = dropped | ({namespace} if namespace else set())
    text = cst.Module(body=[]).code_for_node(function.body)
    if not scope and ".hybrid_forward(" not in text:
        return function, dropped
    body = function.body.visit(_NamespaceDropper(scope, positions))
    params = function.params
    if dropped:
        kept = [p for p in params.params if p.name.value not in dropped]
        if kept and params.params[-1].name.value in dropped:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        params = params.with_changes(params=kept)
    if body is function.body and params is function.params:
        return function, dropped
    updated = function.with_changes(body=body, params=params)
    if function in positions:
        positions[updated] = positions[function]
    return updated, dropped


class _NamespaceDropper(cst.CSTTransformer):
    def __init__(self, names, positions):
        super().__init__()
        self.names, self.positions = names, positions

    def leave_Call(self, original, updated):
        args = [a for a in updated.args if not (a.keyword is None and not a.star and isinstance(a.value, cst.Name)
                                                and a.value.value in self.names)]
        func = updated.func
        if isinstance(func, cst.Attribute) and func.attr.value == "hybrid_forward" and _is_super(func.value):
            func = func.with_changes(attr=cst.Name("forward"))
        if len(args) == len(updated.args) and func is updated.func:
            return updated
        if args and len(args) < len(updated.args):
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(func=func, args=args)

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        if result is not original and isinstance(result, cst.CSTNode) and original in self.positions:
            self.positions.setdefault(result, self.positions[original])
        return result


def _is_super(node):
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super"
