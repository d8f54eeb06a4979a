"""Gluon methods without what only mxnet's runtime needs: `self.initialize(init.Xavier())` and
`self.net.initialize()` in a constructor (d2l's models initialize themselves), `net.hybridize()`, and device
contexts: `X.as_in_ctx(ctx)` / `X.as_in_context(ctx)` are `X`, and `inputs.ctx` / `X.context` are None (the port
has no device objects; `np.zeros(shape, ctx=inputs.ctx)` and `begin_state(n, ctx=inputs.ctx)` take None). A
scratch model's `self.W.attach_grad()` (an array made trainable) makes `self.W` a parameter of the port, as
`nn.Parameter(self.W)` would in torch; `attach_grad()` on anything else is dropped, and a loop that did nothing
else (`for param in self.get_scratch_params(): param.attach_grad()`) with it.

The port's layers make their weights when built (from a .params file or their initialisers) and are compiled by
tf.function/XLA, so the dropped calls change no value a converted model computes. A class that defines a method of
one of these names itself keeps its calls."""

import libcst as cst

from porter.frontend.imports import dotted_name

RUNTIME_ONLY_CALLS = frozenset({"initialize", "hybridize", "reset_ctx"})
CONTEXT_MOVES = frozenset({"as_in_ctx", "as_in_context"})
CONTEXT_ATTRIBUTES = frozenset({"ctx", "context"})
ATTACH_GRAD = "attach_grad"
PARAMETER_ALIAS = ("porter_gluon_attach_grad__", "torch.nn.Parameter")  # the name the rewrite calls, what it is


def without_runtime_calls(method, positions, own_methods, imports=None):
    """`method` (a libcst FunctionDef) without runtime-only statements and context moves; `own_methods`: names the
    class defines (kept when called); `imports`: the file's ImportTable (`mx.context` names a module, not a
    device); `positions` gains the new nodes' source positions."""
    text = cst.Module(body=[]).code_for_node(method)
    if not any(f".{name}" in text for name in RUNTIME_ONLY_CALLS | CONTEXT_MOVES | CONTEXT_ATTRIBUTES | {ATTACH_GRAD}):
        return method
    if f".{ATTACH_GRAD}(" in text and imports is not None:
        imports.aliases.setdefault(*PARAMETER_ALIAS)
    updated = method.visit(_RuntimeCallRemover(positions, frozenset(own_methods), imports))
    if updated is not method and method in positions:
        positions.setdefault(updated, positions[method])
    return updated


def _statement_call(statement):
    """The call a statement consists of (`net.initialize()`), or None."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1 or not isinstance(
            statement.body[0], cst.Expr):
        return None
    call = statement.body[0].value
    return call if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) else None


def _runtime_call(statement, own_methods):
    call = _statement_call(statement)
    return call is not None and call.func.attr.value in RUNTIME_ONLY_CALLS | {ATTACH_GRAD} and not (
        call.func.attr.value in own_methods and dotted_name(call.func.value) == "self")


def _made_trainable(statement):
    """`self.W = porter_gluon_attach_grad__(self.W)` for the statement `self.W.attach_grad()`, else None."""
    call = _statement_call(statement)
    if call is None or call.func.attr.value != ATTACH_GRAD or call.args:
        return None
    target = dotted_name(call.func.value)
    if target is None or not target.startswith("self.") or target.count(".") != 1:
        return None
    value = cst.Call(func=cst.Name(PARAMETER_ALIAS[0]), args=[cst.Arg(call.func.value)])
    return statement.with_changes(body=[cst.Assign(targets=[cst.AssignTarget(call.func.value)], value=value)])


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
        trainable = _made_trainable(original) if self.imports is not None else None
        if trainable is not None:
            return trainable
        return cst.RemovalSentinel.REMOVE if _runtime_call(original, self.own_methods) else updated

    def leave_For(self, original, updated):
        body = original.body.body if isinstance(original.body, cst.IndentedBlock) else ()
        if body and not original.orelse and all(_runtime_call(s, self.own_methods) and _made_trainable(s) is None
                                                for s in body):
            return cst.RemovalSentinel.REMOVE  # the loop only made mxnet runtime calls
        return updated

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
