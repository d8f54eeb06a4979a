"""Gluon methods without what only mxnet's runtime needs: `self.initialize(init.Xavier())` and
`self.net.initialize()` in a constructor (d2l's models initialize themselves), `net.hybridize()`, and device
contexts: `X.as_in_ctx(ctx)` / `X.as_in_context(ctx)` are `X`, and `inputs.ctx` / `X.context` are None (the port
has no device objects; `np.zeros(shape, ctx=inputs.ctx)` and `begin_state(n, ctx=inputs.ctx)` take None).

The port's layers make their weights when built (from a .params file or their initialisers) and are compiled by
tf.function/XLA, so the dropped calls change no value a converted model computes. A class that defines a method of
one of these names itself keeps its calls."""

import libcst as cst

from porter.frontend.imports import dotted_name

RUNTIME_ONLY_CALLS = frozenset({"initialize", "hybridize", "reset_ctx"})
CONTEXT_MOVES = frozenset({"as_in_ctx", "as_in_context"})
CONTEXT_ATTRIBUTES = frozenset({"ctx", "context"})


def without_runtime_calls(method, positions, own_methods, imports=None):
    """`method` (a libcst FunctionDef) without runtime-only statements and context moves; `own_methods`: names the
    class defines (kept when called); `imports`: the file's ImportTable (`mx.context` names a module, not a
    device); `positions` gains the new nodes' source positions."""
    text = cst.Module(body=[]).code_for_node(method)
    if not any(f".{name}" in text for name in RUNTIME_ONLY_CALLS | CONTEXT_MOVES | CONTEXT_ATTRIBUTES):
        return method
    updated = method.visit(_RuntimeCallRemover(positions, frozenset(own_methods), imports))
    if updated is not method and method in positions:
        positions.setdefault(updated, positions[method])
    return updated


def _runtime_call(statement, own_methods):
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1 or not isinstance(
            statement.body[0], cst.Expr):
        return False
    call = statement.body[0].value
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
        call.func.attr.value in RUNTIME_ONLY_CALLS and not (
            call.func.attr.value in own_methods and dotted_name(call.func.value) == "self")


class _RuntimeCallRemover(cst.CSTTransformer):
    def __init__(self, positions, own_methods, imports):
        super().__init__()
        self.positions, self.own_methods, self.imports = positions, own_methods, imports

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        if result is not original and isinstance(result, cst.CSTNode) and original in self.positions:
            self.positions.setdefault(result, self.positions[original])
        return result

    def leave_SimpleStatementLine(self, original, updated):
        return cst.RemovalSentinel.REMOVE if _runtime_call(original, self.own_methods) else updated

    def leave_IndentedBlock(self, original, updated):
        if not updated.body:  # every statement was a runtime-only call
            return updated.with_changes(body=[cst.SimpleStatementLine(body=[cst.Pass()])])
        return updated

    def leave_Call(self, original, updated):
        func = updated.func
        if isinstance(func, cst.Attribute) and func.attr.value in CONTEXT_MOVES and \
                func.attr.value not in self.own_methods:
            return func.value
        return updated

    def leave_Attribute(self, original, updated):
        if updated.attr.value in CONTEXT_ATTRIBUTES and isinstance(updated.value, cst.Name) and \
                updated.value.value != "self" and (self.imports is None or
                                                   self.imports.resolve(updated.value) is None):
            return cst.Name("None")
        return updated
