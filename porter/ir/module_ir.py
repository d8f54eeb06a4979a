"""The per-class IR: what porter learned about one source module class and what each source line became.

Printable with `dump()` for readable golden tests; every record carries its source line.
"""

from dataclasses import dataclass, field


@dataclass
class Unsupported:
    line: int
    construct: str
    reason: str


@dataclass
class Adjustment:
    """A semantic difference porter handled, said where it happens (shown in the report)."""

    line: int
    text: str


@dataclass
class TpuFinding:
    """Something in the source that compiles badly, slowly or not at all for TPU (the TPU lint pass finds it)."""

    line: int
    kind: str  # an id of porter/passes/tpu_lint_kinds.py: "host-sync", "float64", ...
    message: str  # what was found, in the source's terms
    suggestion: str  # the rewrite that fixes it
    class_name: str | None = None  # None: module-level or training code

    def as_manifest(self):
        return {"line": self.line, "kind": self.kind, "class": self.class_name, "message": self.message,
                "suggestion": self.suggestion}


@dataclass
class LineMapping:
    """Source lines [start, end] and the generated lines they became (text, not positions)."""

    source_start: int
    source_end: int
    source: str
    generated: str


@dataclass
class ModuleIR:
    """One nn.Module subclass: its constructor, attributes, call signature layouts and translated body."""

    name: str
    source_line: int
    init_params: list = field(default_factory=list)  # (name, default source text or None)
    attributes: dict = field(default_factory=dict)  # torch attribute name -> ModuleRef or "parameter"/"buffer"/"value"
    renamed: dict = field(default_factory=dict)  # Keras attribute name -> torch attribute name
    arg_layouts: tuple = ()
    layout_out: str = "source"
    # rank -> layout out of a case of `call` for callers handing another rank (a block run on images and on
    # sequences), where it differs from `layout_out`
    rank_layouts_out: dict = field(default_factory=dict)
    layout_free: bool = False  # an elementwise forward: the same code whichever layout arrives (porter_layout "any")
    code: str = ""
    mappings: list = field(default_factory=list)
    unsupported: list = field(default_factory=list)
    adjustments: list = field(default_factory=list)
    tpu_findings: list = field(default_factory=list)  # TpuFinding of this class's code, in source order
    ops: set = field(default_factory=set)
    flatten_inputs: dict = field(default_factory=dict)  # Linear attribute -> channel expression (load-time permute)
    plain_linears: set = field(default_factory=set)  # Linear attributes also called on torch-ordered inputs
    # Linear -> channel expression of the image its output is viewed as (load-time permute of its weight rows)
    image_rows: dict = field(default_factory=dict)
    # torch path of a Flatten / Unflatten child of a Sequential that runs on the image held channels-last -> the
    # image's channel expression (a Flatten's) or "" (an Unflatten's: the Linear before it, in image_rows, has it)
    held_reshapes: dict = field(default_factory=dict)
    io_inputs: tuple = ()  # main class: per forward argument, whether it switches with `channels_last_io`
    nodes: dict = field(default_factory=dict)  # (line, kind, op, target) -> OpNode: the op graph (ir/op_nodes.py)
    specialisations: tuple = ()  # literal constructor values (attribute, text) `call` has a case of its own for

    @property
    def status(self):
        return "partial" if self.unsupported else "converted"

    def dump(self):
        lines = [f"module {self.name} (line {self.source_line}) status={self.status}",
                 f"  params: {', '.join(p if d is None else f'{p}={d}' for p, d in self.init_params)}",
                 f"  layouts: in={list(self.arg_layouts)} out={self.layout_out}"]
        for static in self.specialisations:
            lines.append(f"  call specialised for {', '.join(f'{attr}={text}' for attr, text in static)}")
        for name, ref in self.attributes.items():
            lines.append(f"  attr {name}: {describe_ref(ref)}")
        for op in sorted(self.ops):
            lines.append(f"  op {op}")
        for item in self.unsupported:
            lines.append(f"  unsupported line {item.line}: {item.construct} ({item.reason})")
        return "\n".join(lines)


def describe_ref(ref):
    """What an attribute holds, in a few words: `Conv2d (channels_last)`, `class Block`, `sequential[...]`."""
    if isinstance(ref, str):
        return ref
    if isinstance(ref, (list, tuple)):  # what a name holds several of (`#lambdas`: the lambdas handed to it)
        return "[" + ", ".join(describe_ref(item) for item in ref) + "]"
    if not hasattr(ref, "kind"):
        return type(ref).__name__
    if ref.kind == "rule":
        return f"{ref.rule.runtime} ({ref.rule.layout})"
    if ref.kind == "class":
        return f"class {ref.class_name}"
    if ref.kind in ("sequential", "list", "dict"):
        inner = ", ".join(describe_ref(e) for e in ref.elements)
        return f"{ref.kind}[{inner}]{'' if ref.ordered else ' unordered'}"
    if ref.alternatives:
        return f"one of {' | '.join(describe_ref(a) for a in ref.alternatives)}"
    return ref.kind
