"""TPU lint: float64 anywhere in the model code (`torch.float64`, `torch.double`, `.double()`), constructor included.

A float64 buffer made in `__init__` is as costly on TPU as a float64 op in forward, so every method of every model
class is read, and the module-level helpers the model uses.
"""

import libcst as cst

FLOAT64 = {"torch.float64", "torch.double", "torch.DoubleTensor", "torch.complex128", "torch.cdouble",
           "torch.cuda.DoubleTensor"}
SUGGESTION = ("use float32 (`torch.float32`, `.float()`); if float64 was there for precision (a long sum, a "
              "variance), keep float32 and use a stable formulation (`torch.logsumexp`, mean-centred variance)")


def lint_float64(node, source, where):
    """Findings (line, kind, message, suggestion) of float64 uses inside `node` (a class or a function)."""
    found, lines = [], set()

    def check(node):
        if isinstance(node, cst.Attribute):
            canonical = source.imports.resolve(node)
            if canonical in FLOAT64:
                add(node, f"`{canonical}`")
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "double" and not node.args and \
                source.imports.resolve(node.func) is None:
            add(node, "`.double()`")

    def add(node, what):
        line = source.line_of(node)
        if line in lines:
            return
        lines.add(line)
        code = " ".join(source.code_of(node).split())
        found.append((line, "float64", f"`{code[:70]}` in {where}: {what} makes float64 tensors", SUGGESTION))

    for found_node in source.nodes_in(node, cst.Attribute, cst.Call):
        check(found_node)
    return found
