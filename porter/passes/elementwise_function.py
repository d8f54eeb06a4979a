"""Whether a `torch.autograd.Function` computes elementwise: then its port follows its inputs' layout.

A memory-efficient activation (`SwishImplementation`: `i * torch.sigmoid(i)` forward, the matching elementwise
gradient backward) neither mixes positions nor names an axis, so it runs on channels-last tensors as on torch's
order: the caller hands its tensors over as they are (no Transpose) and gets the result in the same layout.
The check is conservative: every call in the class's methods is a torch function or tensor method whose rule is
pointwise (`pointwise_rule` in porter/rules) or `ctx` bookkeeping, and the only subscripts read
`ctx.saved_tensors`; anything else keeps torch's layout at the call.
"""

import libcst as cst

from porter.frontend.walk import walk
from porter.rules.registry import function_rule_named, is_pointwise, method_rule

# what a Function's `ctx` does besides computing: bookkeeping, no values
CTX_BOOKKEEPING = frozenset({"save_for_backward", "mark_dirty", "mark_non_differentiable", "set_materialize_grads"})


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
        if canonical is not None and is_pointwise(function_rule_named(canonical)):
            return
        if canonical is None and isinstance(node.func, cst.Attribute) and (
                node.func.attr.value in CTX_BOOKKEEPING or is_pointwise(method_rule(node.func.attr.value))):
            return
        self.elementwise = False

    def visit_Subscript(self, node):
        if not (isinstance(node.value, cst.Attribute) and node.value.attr.value == "saved_tensors"):
            self.elementwise = False

    def visit_Lambda(self, node):
        self.elementwise = False
