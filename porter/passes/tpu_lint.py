"""The TPU lint pass: after translation, find what in the source compiles badly, slowly or not at all for TPU.

Reads the source (never runs it) and the per-class ModuleIR; each finding carries the source line, a kind
(porter/passes/tpu_lint_kinds.py), what was found and the rewrite that fixes it. Findings are advice: they never
change what porter generates or its exit code. The rules live one family per file:
- tpu_lint_forward.py: the code that runs every step (forward and the methods and helpers it calls);
- tpu_lint_float64.py: float64 anywhere in the model code;
- tpu_lint_sizes.py: layer sizes that waste the MXU;
- tpu_lint_batch.py: the training code's batch size per core.
"""

import libcst as cst

from porter.ir.module_ir import TpuFinding
from porter.passes.tpu_lint_batch import lint_batch_size
from porter.passes.tpu_lint_float64 import lint_float64
from porter.passes.tpu_lint_forward import lint_function
from porter.passes.tpu_lint_sizes import lint_layer_sizes

STEP_ENTRY_POINTS = ("forward", "hybrid_forward")


def lint_tpu(source, ctx):
    """Every finding of the file, in source order; each class's findings are also set on its ModuleIR."""
    findings, seen = [], set()

    def keep(raw, class_name):
        kept = []
        for line, kind, message, suggestion in raw:
            if line is None or (line, kind) in seen or _linked(source, line):
                continue
            seen.add((line, kind))
            kept.append(TpuFinding(line, kind, message, suggestion, class_name))
        return kept

    for name, info in source.classes.items():
        ir = ctx.irs.get(name)
        attributes = ir.attributes if ir is not None else {}
        raw = []
        for function, where, is_method in step_functions(info, source):
            raw += lint_function(function, source, attributes, where, is_method)
        raw += lint_float64(info.node, source, f"`{name}`")
        raw += lint_layer_sizes(info, source, ctx.init_args if name == ctx.main_class else None)
        class_findings = sorted(keep(raw, name), key=_order)
        if ir is not None:
            ir.tpu_findings = class_findings
        findings += class_findings
    for function_name in source.model_functions():
        findings += keep(lint_float64(source.functions[function_name], source, f"`{function_name}()`"), None)
    findings += keep(lint_batch_size(source, ctx.main_class), None)
    return sorted(findings, key=_order)


def step_functions(info, source):
    """(function node, where, is_method) of forward and of every method and module-level helper it calls, each
    once, in the order they are found."""
    start = next((name for name in STEP_ENTRY_POINTS if info.find_method(name) is not None), None)
    if start is None:
        return []
    found, queue, done = [], [("method", start)], set()
    while queue:
        kind, name = queue.pop(0)
        if (kind, name) in done:
            continue
        done.add((kind, name))
        if kind == "method":
            function = info.find_method(name)
            owner = info.owner_of(name)
            found.append((function, f"`{owner.name}.{name}`", not _static(function)))
        else:
            function = source.functions[name]
            found.append((function, f"`{name}()`", False))
        queue += [callee for callee in _callees(function, info, source) if callee not in done]
    return found


def _static(function):
    """A `@staticmethod`: no `self` before its parameters."""
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in function.decorators)


def _callees(function, info, source):
    callees = []
    for call in source.nodes_in(function, cst.Call):
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
                and func.attr.value in _methods_of(info):
            callees.append(("method", func.attr.value))
        elif isinstance(func, cst.Name) and func.value in source.functions:
            callees.append(("function", func.value))
    return callees


def _methods_of(info):
    names = set(info.methods)
    for base in info.bases:
        if base in info.family:
            names |= _methods_of(info.family[base])
    return names


def _linked(source, line):
    """Lines the linker appended from other files of the package: their findings belong to those files."""
    return source.linked_from_line is not None and line >= source.linked_from_line


def _order(finding):
    return finding.line, finding.kind
