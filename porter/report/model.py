"""The data behind PORTING.md and report.html: one Report built from the per-class IR, the source and the output.

Both reports render the same Report, so they always agree. Everything here is deterministic: ordering comes from
source order or sorting, and nothing depends on the output directory or the time.
"""

import re
from dataclasses import dataclass, field

from porter import __version__
from porter.passes.tpu_lint_kinds import KINDS, count_text
from porter.report.adjustments import context_notes, derive_notes
from porter.report.equivalence import NOT_RUN
from porter.report.source_map import GeneratedText, build_walks


@dataclass
class UnsupportedItem:
    line: int
    construct: str
    reason: str
    advice: str
    class_name: str
    generated_line: int | None = None
    anchor: str | None = None
    place: str | None = None  # `file:line` of a stub in a linked definition (library code), as its own file has it


@dataclass
class TpuLintItem:
    """One TPU lint finding as the reports show it (from the manifest's `tpu_lint` list)."""

    line: int
    kind: str
    message: str
    suggestion: str
    class_name: str | None = None  # None: module-level or training code
    anchor: str | None = None  # the side-by-side row of the line, when it is model code

    @property
    def label(self):
        return KINDS[self.kind].label if self.kind in KINDS else self.kind


@dataclass
class ClassReport:
    name: str
    line: int
    status: str
    is_main: bool
    arg_layouts: list
    layout_out: str
    renamed: dict
    ops: list
    unsupported: list
    notes: list  # [(Note, anchor or None)]
    walks: list
    example_inputs: list | None = None

    @property
    def anchor(self):
        return f"class-{self.name}"


@dataclass
class Report:
    source_name: str
    module_name: str
    porter_version: str
    main_class: str
    framework: str
    classes: list
    function_notes: dict  # module-level function name -> [Note]
    dropped: list  # (line, first line of code) not carried over
    warnings: list
    tpu_findings: list  # [TpuLintItem] in source order
    numbered: bool  # whether generated line numbers are the real module's
    equivalence: dict = field(default_factory=lambda: dict(NOT_RUN))
    init_args: dict = field(default_factory=dict)  # the main class's constructor arguments (--init-args)
    model_factory: str | None = None  # the function building the main class, when a factory does

    @property
    def module_import(self):
        """The Keras module's import name: `resnet_keras`."""
        return self.module_name.removesuffix(".py")

    @property
    def imported_name(self):
        """What the loading example imports from the Keras module: the class, or the factory building it."""
        return (self.model_factory or self.main_class).split(".")[0]

    @property
    def construction(self):
        """How the main class is built in Python: `Net()` or `Net(width=32)`."""
        arguments = ", ".join(f"{key}={value!r}" for key, value in self.init_args.items())
        return f"{self.model_factory or self.main_class}({arguments})"

    @property
    def tpu_summary(self):
        """'3 findings (host sync 1, float64 2)', or None."""
        return count_text([f.kind for f in self.tpu_findings])

    @property
    def tpu_kinds(self):
        """The LintKinds the findings have, in the order they first appear (their reasons are shown once)."""
        kinds = []
        for finding in self.tpu_findings:
            kind = KINDS.get(finding.kind)
            if kind is not None and kind not in kinds:
                kinds.append(kind)
        return kinds

    @property
    def ops_mapped(self):
        return sorted({op for c in self.classes for op in c.ops})

    @property
    def stub_count(self):
        return sum(len(c.unsupported) for c in self.classes)

    @property
    def note_count(self):
        return sum(len(c.notes) for c in self.classes) + sum(len(n) for n in self.function_notes.values())

    @property
    def status_counts(self):
        counts = {}
        for c in self.classes:
            counts[c.status] = counts.get(c.status, 0) + 1
        return dict(sorted(counts.items()))

    @property
    def statement_rows(self):
        return sum(1 for c in self.classes for w in c.walks for r in w.rows if r.kind == "statement")


_CACHE = {}  # id(ctx) -> (ctx, dropped, warnings, module_text, Report): the last report, shared by both renderers


def build_report(source, ctx, manifest, dropped=None, warnings=None, module_text=None):
    """The Report for one conversion (cached per ctx, so PORTING.md and report.html share one build)."""
    if module_text is None:
        module_text = _module_text(ctx, manifest)
    cached = _CACHE.get(id(ctx))
    if cached is not None and cached[0] is ctx and (dropped is None or cached[1] == dropped) and \
            (warnings is None or cached[2] == warnings) and (module_text is None or cached[3] == module_text):
        return cached[4]
    if dropped is None and cached is not None and cached[0] is ctx:
        dropped, warnings = cached[1], cached[2]
    report = _build(source, ctx, manifest, list(dropped or []), list(warnings or []), module_text)
    _CACHE.clear()
    _CACHE[id(ctx)] = (ctx, dropped, warnings, module_text, report)
    return report


def _module_text(ctx, manifest):
    """The formatted generated module when the conversion handed it over (`ctx.generated_files`), else None."""
    files = getattr(ctx, "generated_files", None)
    if not files:
        return None
    return files.get(manifest["sources"][0]["module"])


def _fallback_text(source, ctx):
    """The generated classes, formatted as the module formats them (line numbers are then not the module's)."""
    from porter.codegen.emit import format_code

    chunks = [ctx.irs[name].code.rstrip("\n") for name in source.classes if name in ctx.irs and ctx.irs[name].code]
    return format_code("\n\n\n".join(chunks) + "\n") if chunks else ""


def _build(source, ctx, manifest, dropped, warnings, module_text):
    numbered = module_text is not None
    generated = GeneratedText(module_text if numbered else _fallback_text(source, ctx), numbered=numbered)
    walks = build_walks(source, ctx, generated)
    notes = getattr(ctx, "derived_notes", None)  # derived beside the module's rendering (convert._lint_and_notes_started)
    if notes is None:
        notes = derive_notes(source, ctx)
    module_name = manifest["sources"][0]["module"]
    main_class = manifest["main_class"]
    manifest_classes = {c["name"]: c for c in manifest["sources"][0]["classes"]}
    classes, class_walks_by_name = [], {}
    for name, info in source.classes.items():
        ir = ctx.irs.get(name)
        if ir is None:
            continue
        class_walks = walks.get(name, [])
        class_walks_by_name[name] = class_walks
        taken = {row.anchor for walk in class_walks for row in walk.rows if row.anchor}
        placed = [(note, _place(note, class_walks, taken)) for note in notes.get(name, [])]
        placed = sorted(placed + context_notes(class_walks, ctx), key=lambda item: item[0].sort_key)
        unsupported = []
        for item in ir.unsupported if name in manifest_classes else ():  # else a sibling port's: counted there
            row = _row_for(item.line, class_walks)
            unsupported.append(UnsupportedItem(
                item.line, item.construct, item.reason, _advice(item, module_name), name,
                _stub_line(generated, item, source), row.anchor_for(item.line, taken) if row else None,
                _linked_place(source, item.line)))
        classes.append(ClassReport(
            name, info.line, ir.status, name == main_class, list(ir.arg_layouts), ir.layout_out, dict(ir.renamed),
            sorted(ir.ops), unsupported, placed, class_walks,
            manifest_classes.get(name, {}).get("example_inputs")))
    function_notes = {name: found for name, found in notes.items() if name not in source.classes}
    return Report(source.path.name, module_name, manifest.get("porter_version", __version__), main_class,
                  manifest["sources"][0].get("framework", "torch"), classes, function_notes,
                  [(line, text) for line, text in dropped], [w.split(": ", 1)[-1] for w in warnings],
                  _tpu_findings(manifest, class_walks_by_name), numbered,
                  init_args=dict(manifest.get("init_args") or {}), model_factory=manifest.get("model_factory"))


def _row_for(line, walks):
    best = None
    for walk in walks:
        for row in walk.rows:
            if row.covers(line):
                if row.kind == "statement":
                    return row
                best = best or row
    return best


def _place(note, walks, taken):
    """Attach `note` to the walk row holding its source line; returns the anchor of that line (None: no row)."""
    row = _row_for(note.line, walks)
    if row is None:
        return None
    if note not in row.notes:
        row.notes.append(note)
    return row.anchor_for(note.line, taken)


def _stub_line(generated, item, source):
    if not generated.numbered:
        return None
    name, line = source.origin(item.line)
    needle = f"{item.construct} at {name}:{line} is not supported yet"
    for number, line in enumerate(generated.lines, start=1):
        if needle in line:
            return number
    return None


def _advice(item, module_name):
    if re.search(r"no rule for this (layer|module)", item.reason):
        return (f"write the layer by hand in `{module_name}` (replace the `UnsupportedModule` placeholder; give it "
                "`torch_state` so `load_state_dict` fills its weights), or add a rule: one file in porter/rules/ "
                "plus its runtime layer")
    if "no rule" in item.reason:
        return (f"translate the expression by hand in `{module_name}` (the stub raises NotImplementedError there), "
                "or add a rule: one file in porter/rules/ plus its runtime function")
    return (f"rewrite this construct by hand in `{module_name}` (the stub raises NotImplementedError there), or "
            "restructure the source so porter can read it statically")


def _tpu_findings(manifest, walks):
    """The manifest's TPU lint findings, each linked to its side-by-side row when it is in a class's code."""
    items = []
    for entry in manifest["sources"][0].get("tpu_lint", []):
        class_name = entry.get("class")
        class_walks = walks.get(class_name, [])
        row = _row_for(entry["line"], class_walks)
        taken = {r.anchor for walk in class_walks for r in walk.rows if r.anchor}
        anchor = row.anchor_for(entry["line"], taken) if row is not None else None
        if anchor is None and class_name in walks:
            anchor = f"class-{class_name}"
        items.append(TpuLintItem(entry["line"], entry["kind"], entry["message"], entry["suggestion"], class_name,
                                 anchor))
    return items


def _linked_place(source, line):
    """`file:line` where a line of a definition the linker appended is written (a library's file), else None."""
    name, origin_line = source.origin(line)
    return f"{name}:{origin_line}" if name != source.path.name else None

