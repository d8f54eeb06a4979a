"""The op graph the translator records per class: one node per op call, layer call, class call and layout
conversion, with its source line and the meta of what goes in and comes out (kind, rank, layout, dtype).

A node is keyed by (line, kind, op, target): when a class is translated again (a layout trial, a specialisation
for another caller), the later translation replaces what an earlier one recorded, so the graph shows the port's
final decisions. `porter ir` prints it (porter/ir/printer.py).
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class OpNode:
    line: int | None
    kind: str  # "op" | "layer" | "class" | "sequential" | "convert"
    op: str  # framework-neutral id: torch.nn.functional.relu, Conv2d, class BasicBlock, to_channels_last
    target: str  # what is called (self.conv1) or converted (x)
    inputs: tuple  # meta text of the tensor arguments
    output: str  # meta text of the result


def meta(value):
    """`4d channels_last int` / `tensor source` / `tuple(2)` / `python`: what a Value is, in a few words."""
    if value is None:
        return "-"
    if value.kind == "tensor":
        rank = f"{value.rank}d " if value.rank is not None else ""
        dtype = f" {value.dtype}" if value.dtype else ""
        return f"{rank}{value.layout}{dtype}"
    if value.kind == "tuple":
        return f"tuple({len(value.items)})" if value.items is not None else "tuple"
    return value.kind


def record(ctx, kind, op, target, inputs, output):
    """Add a node to the class being translated (nothing outside a class)."""
    ir = ctx.ir
    if ir is None:
        return
    node = OpNode(getattr(ctx, "line", None), kind, op, target,
                  tuple(meta(v) for v in inputs if getattr(v, "kind", None) in ("tensor", "tuple")), meta(output))
    ir.nodes[(node.line, kind, op, target)] = node
