"""The Gluon frontend: MXNet Gluon `Block`/`HybridBlock` classes read as the same class structure torch's
`nn.Module`s give the translator.

What Gluon spells differently is normalised here, once, so that the passes stay framework-neutral:
- `hybrid_forward(self, F, x, ...)` is the class's forward; `F` (a parameter naming `mx.nd` or `mx.sym`) becomes
  an alias of the op namespace `mxnet.ndarray`, whose rules live in porter/rules/gluon_*.py;
- `with self.name_scope():` (and `with self.features.name_scope():`) only name parameters in mxnet: their bodies
  are read as if they were written without the `with`.
The rewritten nodes take the source positions of the nodes they replace, so lines stay the source's.
"""

import libcst as cst

from porter.frontend.imports import dotted_name

# Canonical ids (after imports.CANONICAL_PREFIXES) of the classes a Gluon model class derives from.
BLOCK_BASES = {"mxnet.gluon.Block", "mxnet.gluon.HybridBlock", "mxnet.gluon.nn.Block",
               "mxnet.gluon.nn.HybridBlock"}
CONTAINER_BASES = {"mxnet.gluon.nn.Sequential": "sequential", "mxnet.gluon.nn.HybridSequential": "sequential"}
OP_NAMESPACE = "mxnet.ndarray"  # what `F` in hybrid_forward, `mx.nd` and `mx.sym` resolve to


def is_gluon(canonical):
    return canonical is not None and (canonical == "mxnet" or canonical.startswith("mxnet."))


def op_namespace_parameter(method):
    """The name of hybrid_forward's op-namespace parameter (`F`), or None."""
    params = list(method.params.params)
    return params[1].name.value if len(params) > 1 else None


def normalised_methods(methods, positions):
    """Gluon methods as the translator reads them: `hybrid_forward` as `forward` without its `F` parameter (a
    class defining `forward` itself keeps it), `name_scope` blocks unwrapped. `positions` gains the new nodes."""
    result = {}
    for name, method in methods.items():
        method = _unwrap_name_scopes(method, positions)
        if name == "hybrid_forward":
            if "forward" in methods:
                continue
            params = list(method.params.params)
            kept = [params[0]] + params[2:] if len(params) > 1 else params
            renamed = method.with_changes(name=cst.Name("forward"), params=method.params.with_changes(params=kept))
            positions[renamed] = positions.get(method)
            name, method = "forward", renamed
        result[name] = method
    return result


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
