"""Whether a `torch.autograd.Function` computes elementwise: then its port follows its inputs' layout.

A memory-efficient activation (`SwishImplementation`: `i * torch.sigmoid(i)` forward, the matching elementwise
gradient backward) neither mixes positions nor names an axis, so it runs on channels-last tensors as on torch's
order: the caller hands its tensors over as they are (no Transpose) and gets the result in the same layout.
The check is conservative: every call in the class's methods is a torch function or tensor method whose rule is
pointwise (`pointwise_rule` in porter/rules) or `ctx` bookkeeping, and the only subscripts read
`ctx.saved_tensors` (or its old name `ctx.saved_variables`, EfficientDet's); anything else keeps torch's layout
at the call.
"""

import libcst as cst

from porter.frontend.walk import walk
from porter.rules.registry import function_rule_named, is_pointwise, method_rule

# what a Function's `ctx` does besides computing: bookkeeping, no values
CTX_BOOKKEEPING = frozenset({"save_for_backward", "mark_dirty", "mark_non_differentiable", "set_materialize_grads"})


def is_elementwise_function(class_node, imports, functions=None):
    """True when every method of the autograd Function `class_node` computes elementwise (see module doc).
    `functions`: the file's top-level functions by name; a method calling one (timm's `swish_fwd(x)`) is elementwise
    when that function's body is, by the same check."""
    # (`symbolic(g, x)` builds the ONNX graph torch exports: never run, by torch's training or by the port)
    methods = [s for s in class_node.body.body if isinstance(s, cst.FunctionDef) and s.name.value != "symbolic"]
    if not any(m.name.value == "forward" for m in methods):
        return False
    checker = _Checker(imports, functions or {})
    for method in methods:
        walk(method.body, checker)
    return checker.elementwise


def elementwise_body(body, imports, functions, module=None):
    """Whether a function body computes elementwise by the same check (pointwise rules and tensor methods, the
    file's `functions` followed, no subscripts or lambdas): timm's `swish(x, inplace)` held in an activation
    registry. With the file's `module`, `SwishAutoFn.apply(x)` of an elementwise autograd Function it defines
    counts too (timm's `swish_me`)."""
    checker = _Checker(imports, functions, module)
    walk(body, checker)
    return checker.elementwise


class _Checker(cst.CSTVisitor):
    def __init__(self, imports, functions, module=None):
        self.imports = imports
        self.functions = functions
        self.module = module
        self.followed = set()  # in-file functions whose bodies were walked (each once: recursion ends)
        self.elementwise = True

    def visit_Call(self, node):
        canonical = self.imports.resolve(node.func)
        if canonical is not None and is_pointwise(function_rule_named(canonical)):
            return
        if canonical is None and self.module is not None and _applied_function(node.func, self.module) is not None:
            applied = _applied_function(node.func, self.module)
            if applied.name.value not in self.followed:
                self.followed.add(applied.name.value)
                if not is_elementwise_function(applied, self.imports, self.functions):
                    self.elementwise = False
            return
        if canonical is None and isinstance(node.func, cst.Name) and node.func.value in self.functions:
            if node.func.value not in self.followed:
                self.followed.add(node.func.value)
                walk(self.functions[node.func.value].body, self)
            return
        if canonical is None and isinstance(node.func, cst.Attribute) and (
                node.func.attr.value in CTX_BOOKKEEPING or is_pointwise(method_rule(node.func.attr.value))):
            return
        self.elementwise = False

    def visit_Subscript(self, node):
        if not (isinstance(node.value, cst.Attribute) and node.value.attr.value in ("saved_tensors",
                                                                                  "saved_variables")):
            self.elementwise = False

    def visit_Lambda(self, node):
        self.elementwise = False


def _applied_function(func, module):
    """The ClassDef of the file's class `Name` when `func` is `Name.apply` (an autograd Function applied), else
    None."""
    if not (isinstance(func, cst.Attribute) and func.attr.value == "apply" and isinstance(func.value, cst.Name)):
        return None
    return top_level_class(module, func.value.value)


def top_level_class(module, name):
    """The ClassDef `module` defines at top level under `name` (any class, not only a module class), or None."""
    return next((s for s in module.body if isinstance(s, cst.ClassDef) and s.name.value == name), None)


def elementwise_function_named(source, name):
    """Whether the file's autograd Function `name` computes elementwise (answered once per source and name)."""
    cache = source.__dict__.setdefault("_elementwise_functions", {})
    if name not in cache:
        node = top_level_class(source.module, name)
        cache[name] = node is not None and is_elementwise_function(node, source.imports, source.functions)
    return cache[name]
