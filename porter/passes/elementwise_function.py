"""Whether a `torch.autograd.Function` computes elementwise: then its port follows its inputs' layout.

A memory-efficient activation (`SwishImplementation`: `i * torch.sigmoid(i)` forward, the matching elementwise
gradient backward) neither mixes positions nor names an axis, so it runs on channels-last tensors as on torch's
order: the caller hands its tensors over as they are (no Transpose) and gets the result in the same layout.
The check is conservative: every call in the class's methods is an elementwise torch function, an elementwise
tensor method or `ctx` bookkeeping, and the only subscripts read `ctx.saved_tensors`; anything else keeps torch's
layout at the call.
"""

import libcst as cst

from porter.frontend.walk import walk

ELEMENTWISE_FUNCTIONS = frozenset({
    "torch.sigmoid", "torch.tanh", "torch.exp", "torch.log", "torch.log1p", "torch.expm1", "torch.relu",
    "torch.abs", "torch.sqrt", "torch.rsqrt", "torch.sign", "torch.erf", "torch.neg", "torch.reciprocal",
    "torch.clamp", "torch.clip", "torch.where", "torch.mul", "torch.add", "torch.sub", "torch.div", "torch.pow",
    "torch.maximum", "torch.minimum", "torch.ones_like", "torch.zeros_like", "torch.full_like", "torch.sin",
    "torch.cos", "torch.nn.functional.relu", "torch.nn.functional.relu6", "torch.nn.functional.sigmoid",
    "torch.nn.functional.silu", "torch.nn.functional.softplus", "torch.nn.functional.gelu",
    "torch.nn.functional.hardtanh", "torch.nn.functional.hardsigmoid", "torch.nn.functional.hardswish",
    "torch.nn.functional.leaky_relu", "torch.nn.functional.elu", "torch.nn.functional.mish",
})
ELEMENTWISE_METHODS = frozenset({
    "sigmoid", "tanh", "exp", "log", "log1p", "relu", "abs", "sqrt", "rsqrt", "sign", "neg", "reciprocal",
    "clamp", "clamp_min", "clamp_max", "clip", "mul", "add", "sub", "div", "pow", "lt", "le", "gt", "ge", "eq",
    "float", "type_as", "to", "clone", "detach", "contiguous", "sin", "cos",
    "save_for_backward", "mark_dirty", "mark_non_differentiable", "set_materialize_grads",  # ctx bookkeeping
})


def is_elementwise_function(class_node, imports):
    """True when every method of the autograd Function `class_node` computes elementwise (see module doc)."""
    methods = [s for s in class_node.body.body if isinstance(s, cst.FunctionDef)]
    if not any(m.name.value == "forward" for m in methods):
        return False
    checker = _Checker(imports)
    for method in methods:
        walk(method.body, checker)
    return checker.elementwise


class _Checker(cst.CSTVisitor):
    def __init__(self, imports):
        self.imports = imports
        self.elementwise = True

    def visit_Call(self, node):
        canonical = self.imports.resolve(node.func)
        if canonical in ELEMENTWISE_FUNCTIONS:
            return
        if canonical is None and isinstance(node.func, cst.Attribute) and \
                node.func.attr.value in ELEMENTWISE_METHODS:
            return
        self.elementwise = False

    def visit_Subscript(self, node):
        if not (isinstance(node.value, cst.Attribute) and node.value.attr.value == "saved_tensors"):
            self.elementwise = False

    def visit_Lambda(self, node):
        self.elementwise = False
