"""Print a conversion's IR deterministically (`porter ir FILE`), as torch.fx prints a graph: per class its
constructor parameters, attributes, call layouts and the op graph the translator recorded, line by line.

Stages (`--after`): "frontend" shows what the source reader found (classes, bases, methods, forward signature);
"lowering" (the default) adds what translation decided (attributes, layouts, one node per op, layer, class call
and layout conversion); "tpu-lint" adds the TPU findings.
"""

from porter.ir.module_ir import describe_ref

STAGES = ("frontend", "lowering", "tpu-lint")


def print_ir(source, ctx, main_class, class_name=None, after="lowering"):
    """The IR text of the classes of `source` (one class with `class_name`)."""
    lines = [f"# porter ir: {source.display_path} ({source.framework}), main class {main_class}, after {after}"]
    names = [class_name] if class_name else list(source.classes)
    for name in names:
        info = source.classes[name]
        lines.append("")
        lines.extend(_frontend(info) if after == "frontend" else _lowered(info, ctx.irs[name], after))
    return "\n".join(lines) + "\n"


def _frontend(info):
    bases = ", ".join(info.bases) or info.layer_base or info.container_base or "module"
    lines = [f"class {info.name}({bases})  line {info.line}"]
    for name in info.methods:
        lines.append(f"  method {name}")
    return lines


def _lowered(info, ir, after):
    params = ", ".join(p if d is None else f"{p}={d}" for p, d in ir.init_params)
    lines = [f"class {info.name}  line {info.line}  {ir.status}",
             f"  init({params})",
             f"  call layouts: in={list(ir.arg_layouts)} out={ir.layout_out}"]
    attributes = [(name, ref) for name, ref in ir.attributes.items() if not name.startswith("#") and "#" not in name]
    if attributes:
        lines.append("  attributes:")
        lines.extend(f"    {name}: {describe_ref(ref)}" for name, ref in attributes)
    if ir.specialisations:
        lines.append("  specialisations: " + ", ".join(f"{a}={t}" for a, t in ir.specialisations))
    if ir.nodes:
        lines.append("  graph:")
        for node in sorted(ir.nodes.values(), key=lambda n: (n.line or 0)):
            where = f"L{node.line}" if node.line is not None else "L?"
            target = f" {node.target}" if node.target else ""
            inputs = ", ".join(node.inputs) or "-"
            lines.append(f"    {where:<5} {node.kind:<10} {node.op}{target}  ({inputs}) -> {node.output}")
    for item in ir.unsupported:
        lines.append(f"  unsupported L{item.line}: {item.construct} ({item.reason})")
    if after == "tpu-lint":
        for finding in ir.tpu_findings:
            lines.append(f"  tpu-lint L{finding.line}: {finding.kind}: {finding.message}")
    return lines

