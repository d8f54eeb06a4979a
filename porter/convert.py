"""`porter convert`: source file -> output directory (model module, manifest, report, tests, training script)."""

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from porter import __version__
from porter.codegen.emit import ModuleEmitter
from porter.errors import SourceError, UsageError
from porter.frontend.factory_reader import required_parameters
from porter.frontend.first_layer import check_input_specs, first_layer, forward_signature
from porter.frontend.libraries import linked_libraries
from porter.frontend.main_class import default_main_class, factory_main_class, is_loss_class
from porter.frontend.model_entry import classmethod_entry, default_entry, model_entry
from porter.frontend.script_code import script_line_ranges
from porter.frontend.sequential_factories import factory_class, requested_factory
from porter.frontend.source import parse_source
from porter.frontend.spatial_size import solve_spatial_size
from porter.frontend.training_code import ExampleInput, read_training_code
from porter.gc_tuning import settled
from porter.ir.values import tensor
from porter.output import listed_files, manifest_text
from porter.passes.classes import FileTranslator
from porter.passes.context import FileContext
from porter.passes.tpu_lint import lint_tpu
from porter.self_check import check_generated
from porter.training.reader import training_fallbacks

SEQUENCE_LENGTH = 16  # token ids per example when only a first Embedding tells the inputs
REPORT_PRODUCER = "porter.outputs.html_report"
RESERVED_MODULE_NAMES = {"torch", "tensorflow", "keras", "mxnet", "numpy", "np", "tf", "jax", "porter"}


@dataclass
class ConvertOptions:
    source: Path
    out: Path | None = None
    class_name: str | None = None
    input_specs: list = field(default_factory=list)
    init_args: dict = field(default_factory=dict)
    weights: Path | None = None
    force: bool = False
    train_script: Path | None = None
    channels_last_io: bool = False  # the main class exchanges images channels-last (--channels-last-io)
    module_dir: str = ""  # POSIX folder under OUT the model module goes to (a file of a package: `porter.package`)
    reports_only: bool = False  # of the further outputs, only the reports (a package file that is not the main one)
    parsed: object = None  # the source's SourceFile when the caller has parsed it already (porter.package)
    siblings: dict = field(default_factory=dict)  # source file -> PortedSibling: ports it imports from (package)
    reports_aside: bool = False  # render the reports in a forked process beside the rest (the command line's way)


@dataclass
class Conversion:
    """Everything a conversion produced, in memory (written by `output.write_tree`, diffed by `porter diff`)."""

    files: dict  # relative POSIX path -> text
    manifest: dict
    warnings: list
    exit_code: int
    translator: object = None
    emitter: object = None
    main_class: str | None = None
    model_factory: object = None  # the ModelEntry building the main class, when a factory does


def parse_input_spec(spec):
    """`1,28,28` (float32), `32:int64:0:64`, or `():int64:1:33` (one value per example: a (batch,) tensor such as
    sequence lengths or a diffusion model's timesteps) -> ExampleInput (batch excluded)."""
    parts = spec.split(":")
    hint = ("sizes of one example, batch excluded: e.g. --input-shape 3,32,32 or --input-shape 32:int64:0:1000; "
            "one number per example (a (batch,) tensor such as sequence lengths): --input-shape ():int64:1:33")
    sizes = parts[0].strip()
    if not sizes:
        raise UsageError(f"--input-shape {spec!r}: no sizes given", hint=hint)
    try:
        shape = [] if sizes == "()" else [int(p) for p in sizes.split(",")]
    except ValueError:
        raise UsageError(f"--input-shape {spec!r}: sizes must be positive integers separated by commas",
                         hint=hint) from None
    for size in shape:
        if size <= 0:
            raise UsageError(f"--input-shape {spec!r}: size {size} is not positive: sizes must be positive integers",
                             hint=hint)
    dtype = parts[1] if len(parts) > 1 and parts[1] else "float32"
    if dtype not in ("float32", "float64", "float16", "bfloat16", "int64", "int32", "bool"):
        raise UsageError(f"--input-shape {spec!r}: unknown dtype {dtype!r}",
                         hint="use float32, int64, int32 or bool")
    try:
        low = float(parts[2]) if len(parts) > 2 else None
        high = float(parts[3]) if len(parts) > 3 else None
    except ValueError:
        raise UsageError(f"--input-shape {spec!r}: low/high must be numbers") from None
    if dtype.startswith("int") and low is not None:
        low, high = int(low), int(high) if high is not None else None
    if len(parts) > 4:
        raise UsageError(f"--input-shape {spec!r}: expected SHAPE[:DTYPE[:LOW:HIGH]]")
    return ExampleInput(shape, dtype, low, high)


def default_out(source):
    return source.parent / f"{source.stem}_keras"


def module_file_name(source):
    stem = source.stem
    name = f"{stem}_keras"
    if name in RESERVED_MODULE_NAMES or not name.isidentifier():
        name = "ported_" + "".join(c if c.isalnum() else "_" for c in stem) + "_keras"
    return f"{name}.py"


def sequential_model(source, path, display, options):
    """(the source read again with the class a Sequential factory builds added, its ModelEntry) where `--class`
    names such a factory or the file holds no module class but one (frontend/sequential_factories.py); else None."""
    name = requested_factory(source, options.class_name)
    if name is None:
        return None
    made = factory_class(source, name, options.init_args)
    if made is None:
        raise UsageError(f"{name}() builds the model as an nn.Sequential, but not every parameter of it has a default",
                         display, source.line_of(source.functions[name]),
                         hint="give the others with --init-args (JSON), or a default each (porter builds the model "
                              "with keyword arguments)")
    _, text, entry = made
    parsed = parse_source(path, display, appended=text)
    parsed.sequential_factory = name
    parsed.__dict__.pop("model_names", None)
    return parsed, entry


def choose_model(source, requested, trained, init_args, widened=None):
    """(source, main class, the ModelEntry of the factory building it or None): `--class` names a class or one of
    the file's factories (`--class resnet50`); without it, a class needing arguments JSON cannot give
    (`ResNet(block, layers)`) is built as the first public factory building it does (frontend/model_entry.py).
    `widened()`: the source read again with its factories' package definitions linked, where a requested factory
    needs them (timm's `efficientnet_b0()`: `decode_arch_def` of _efficientnet_builder.py), returned as the source
    then."""
    if requested is not None and requested not in source.classes and requested in source.functions:
        entry = model_entry(source, requested)
        if entry is None and widened is not None:
            wider = widened()
            entry = model_entry(wider, requested) if requested in wider.functions else None
            if entry is not None:
                return wider, entry.class_name, entry
        if entry is None:
            raise UsageError(f"--class {requested}: porter cannot follow which module class the function "
                             f"{requested}() builds", source.display_path, source.line_of(source.functions[requested]),
                             hint=f"name the class instead (classes found: {', '.join(source.classes)}) and give its "
                                  f"arguments with --init-args")
        return source, entry.class_name, entry
    if requested is not None and "." in requested:  # `--class EfficientNet.from_name`
        entry = classmethod_entry(source, requested)
        if entry is None:
            raise UsageError(f"--class {requested}: no classmethod {requested.partition('.')[2]} of a module class "
                             f"{requested.partition('.')[0]} in {source.display_path}",
                             hint=f"classes found: {', '.join(source.classes)}")
        return source, entry.class_name, entry
    main_class = choose_main_class(source, requested, trained)
    return source, main_class, default_entry(source, main_class, init_args)


def choose_main_class(source, requested, trained):
    if requested is not None:
        if requested not in source.classes:
            known = ", ".join(source.classes) or "none"
            raise UsageError(f"--class {requested}: no nn.Module subclass or model factory of that name in "
                             f"{source.display_path}", hint=f"classes found: {known}")
        return requested
    if trained is not None and is_loss_class(source, trained):
        trained = None  # `loss = MaskedSoftmaxCELoss()` in the training code (d2l's train_seq2seq): not the model
    returned = factory_main_class(source, trained)
    if returned is not None and trained in source.classes and source.classes[trained].derives_from(returned):
        return trained  # `class Net(ResNet)` built by the script, `def ResNet8(): return ResNet(...)`: the model
    return returned or trained or default_main_class(source)


def infer_example_inputs(source, main_class, init_args):
    """From the layer that first reads forward's only tensor argument: Linear(784) -> (784,) float32, Embedding(1000,
    ...) -> SEQUENCE_LENGTH int64 token ids in [0, 1000), Conv2d(3, ...) -> the spatial size that reaches the first
    Linear's in_features (frontend/spatial_size.py). (example inputs, what was assumed or None), or (None, None).
    """
    signature = forward_signature(source, main_class)
    layer = first_layer(source, main_class, init_args) if signature is not None and signature.required == 1 \
        else None
    if layer is None or layer.size is None:
        return None, None
    if layer.kind == "linear":
        return [ExampleInput([layer.size])], None
    if layer.kind == "conv":
        solved = solve_spatial_size(source, main_class, layer.size, layer.spatial, init_args)
        if solved is None:
            return None, None
        size, why = solved
        example = ExampleInput([layer.size] + [size] * layer.spatial)
        return [example], (f"{source.display_path}:{layer.line}: example inputs of {main_class} inferred from its "
                           f"layers: --input-shape {example.spec_text()} ({why}; pass --input-shape to set it)")
    if layer.kind == "embedding":
        example = ExampleInput([SEQUENCE_LENGTH], "int64", 0, layer.size)
        return [example], (f"{source.display_path}:{layer.line}: example inputs of {main_class} taken from its first "
                           f"layer {layer.short_name}({layer.size}, ...): --input-shape {example.spec_text()} (the "
                           f"sequence length {SEQUENCE_LENGTH} is a guess; pass --input-shape to set it)")
    return None, None


def script_constructs(source, class_name):
    """Whether the file's own script (top-level code outside functions and classes, `if __name__ == "__main__":`
    included) calls `class_name(...)`: train_tpu.py builds the model with the arguments read there."""
    import libcst as cst

    for statement in source.module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or source.is_linked(statement):
            continue
        if any(isinstance(call.func, cst.Name) and call.func.value == class_name
               for call in source.nodes_in(statement, cst.Call)):
            return True
    return False


def missing_arguments(source, main_class, init_args):
    """The main class's constructor parameters without a default that `init_args` does not give, sorted."""
    return sorted(required_parameters(source, main_class) - set(init_args or {}))


def unbound_module_bases(source):
    """(class, base, name) of the first top-level class whose base names a module class through a name the file
    never binds (`class WideResNet(nn.Module)` without `import torch.nn as nn`), else None."""
    import libcst as cst

    from porter.frontend.imports import dotted_name
    from porter.frontend.names import top_level_bindings

    bound = set(source.imports.aliases) | set(top_level_bindings(source.module))
    for statement in source.module.body:
        if isinstance(statement, cst.ClassDef):
            for base in statement.bases:
                name = dotted_name(base.value) or ""
                head = name.split(".")[0]
                if name.endswith("Module") and head and head not in bound:
                    return statement.name.value, name, head
    return None


def convert(options, read_only=False):
    """Run the conversion in memory; returns a Conversion (nothing written)."""
    source_path = Path(options.source)
    display = str(options.source)
    source = options.parsed or parse_source(source_path, display)
    settled()  # the parse's objects live to the end: out of the collector's way from here (gc_tuning.py)
    built = sequential_model(source, source_path, display, options)
    if built is not None:  # a function returning `nn.Sequential(...)` builds the model: read as a class
        source, sequential_entry = built
    if not source.classes:
        unbound = unbound_module_bases(source)
        raise SourceError("no nn.Module subclass found", display, hint=(
            f"class {unbound[0]} derives from {unbound[1]}, but the file never imports {unbound[2]!r} (torch "
            f"fails on it too: NameError); import it" if unbound else
            "porter converts classes deriving from torch.nn.Module, and a function returning the model as an "
            "nn.Sequential (put a module-level `model = nn.Sequential(...)` in one: `def make_model(): return "
            "nn.Sequential(...)`)"))
    trained, examples = read_training_code(source)
    wider_sources = []

    def widened():  # read again with what the file's factories use linked in (once)
        if not wider_sources:
            wider_sources.append(parse_source(source_path, display, factories=True))
        return wider_sources[0]

    # (a package file ported beside the main one, reports_only, is imported from, never built: its factories are
    # not read again)
    if built is not None:
        main_class, entry = sequential_entry.class_name, sequential_entry
    else:
        source, main_class, entry = choose_model(source, options.class_name, trained, options.init_args,
                                                 None if options.reports_only else widened)
    # the main class's arguments nothing gives (where the file's script constructs it, they are train_tpu.py's)
    missing = missing_arguments(source, main_class, options.init_args) \
        if entry is None and not script_constructs(source, main_class) and not options.reports_only else []
    if missing:
        # built only by a factory taking parts from the package (torchvision's `fcn_resnet50()`: resnet.py's
        # `resnet50()`)
        wider = widened()
        _, wider_main, wider_entry = choose_model(wider, options.class_name, trained, options.init_args)
        # (another class where none was asked for: timm's res2net.py holds its block, `Bottle2neck`, and factories
        # building resnet.py's `ResNet` with it; vitamin.py's build `VisionTransformer`: the model is what they build)
        chosen = options.class_name is None  # (no script builds the class: `trained` came from a helper then)
        if wider_entry is None and chosen:
            wider_entry = default_entry(wider, None, options.init_args)
            wider_main = wider_entry.class_name if wider_entry is not None else None
        if wider_entry is not None and (wider_main == main_class or chosen):
            source, entry, missing, main_class = wider, wider_entry, [], wider_main
    # the constructor arguments of the main class: the user's, unless they are the factory's
    class_args = {} if entry is not None else options.init_args or {}
    if entry is not None and entry.names:  # what the port's factory reads is model code
        source.add_entry_names(entry.names)
    warnings = []
    if options.input_specs:
        example_inputs = [parse_input_spec(s) if isinstance(s, str) else s for s in options.input_specs]
        check_input_specs(source, main_class, example_inputs, [s if isinstance(s, str) else s.spec_text()
                                                               for s in options.input_specs], class_args)
    else:
        example_inputs = examples.get(main_class)
    example_values = {}
    if example_inputs:
        # (an integer input, token ids or a diffusion model's timesteps, is known to be one: `t[:, None] * freqs`
        # promotes it as torch does)
        example_values[main_class] = ([tensor(f"input{i}", len(e.shape) + 1).but(
            dtype="int" if str(e.dtype).startswith(("int", "uint")) else None) for i, e in enumerate(example_inputs)],
                                      {})
    banned = frozenset()
    while True:  # handed lambdas called in layouts no one translation fits (passes/lambda_signatures.py): the file
        ctx = FileContext(source, main_class=main_class, init_args=class_args)  # again, those called as written
        ctx.lambda_banned = banned
        ctx.model_entry = entry
        ctx.builds_the_model = not options.reports_only
        translator = FileTranslator(ctx, example_values).translate(main_class)
        if not ctx.lambda_conflicts - banned:
            break
        banned |= ctx.lambda_conflicts
    if options.channels_last_io:
        if not any(ctx.irs[main_class].io_inputs):
            raise UsageError(f"--channels-last-io: {main_class} takes no channels-first image it works on "
                             f"channels-last", hint="leave the flag out: the port keeps torch's layout")
        ctx.channels_last_io = True
    if not example_inputs:
        example_inputs, assumed = infer_example_inputs(source, main_class, class_args)
        warnings.extend([assumed] if assumed else [])
        if not example_inputs:
            warnings.append(f"{display}: example inputs of {main_class} are unknown; `porter verify` and "
                            f"train_tpu.py need them (pass --input-shape)")
    if missing:  # (torchvision's FCN(backbone, classifier), built by a factory through a sibling file's factory)
        warnings.append(f"{display}:{source.classes[main_class].line}: {main_class} needs {', '.join(missing)}, "
                        f"which --init-args does not give and no factory of the file porter can follow builds; "
                        f"train_tpu.py and `porter verify` cannot build it (pass --init-args, or --class a factory)")
    warnings.extend(training_fallbacks(source, main_class, options.train_script))
    for top, (version, modules) in linked_libraries(source.linked_origins.values()).items():
        files = ", ".join(modules[:4]) + (f" and {len(modules) - 4} more" if len(modules) > 4 else "")
        warnings.append(f"{display}: definitions linked from the installed {top}{f' {version}' if version else ''} "
                        f"({files}); its pretrained weights are not downloaded: load the torch model's state_dict "
                        f"into the port (--weights, or load_state_dict)")
    module_name = module_file_name(source_path)
    emitter = ModuleEmitter(translator, options.siblings,
                            f"{options.module_dir}/{module_name}" if options.module_dir else module_name)
    # the TPU lint (advice for TPU: shown in the manifest and reports, never an exit code) and the reports' notes in
    # a forked child while this process renders the model module and the runtime module beside it, which ruff
    # formats meanwhile; the same child renders the reports later (_outputs_with_reports_aside)
    aside = _aside_started(source, ctx, options) if options.reports_aside else None
    try:
        module_files = emitter.render_started(module_name)
        if options.module_dir:  # a file of a package: mirrored under OUT
            module_files = {f"{options.module_dir}/{name}": text for name, text in module_files.items()}
            module_name = f"{options.module_dir}/{module_name}"
        out = Path(options.out) if options.out else default_out(source_path)
        files = {name: pending.result() for name, pending in module_files.items()}
        tpu_findings = _lint_result(aside.receive() if aside is not None else None, source, ctx)
        imported = {name for names in emitter.imported.values() for name in names}  # translated in a sibling's port
        manifest = build_manifest(source, ctx, out, source_path, module_name, main_class, example_inputs,
                                  options.init_args, tpu_findings, imported)
        if entry is not None:  # the scripts, tests and `porter verify` build the model through it
            manifest["model_factory"] = entry.function
            if entry.torch_arguments:  # what torch's side hands the source's factory: no pretrained weights
                manifest["model_factory_torch_arguments"] = dict(entry.torch_arguments)
        manifest["channels_last_io"] = bool(options.channels_last_io)  # the main class's default for its images
        ctx.generated_files = files  # the reports place generated line numbers from it
    except BaseException:
        if aside is not None:
            aside.abandon()
        raise
    producers = _extra_outputs(options.reports_only)
    outputs = None
    if aside is not None:
        outputs = _outputs_with_reports_aside(aside, source, ctx, manifest, emitter.dropped, warnings, producers,
                                              options)
    checked = outputs is not None
    if outputs is None:
        outputs = _outputs(source, ctx, manifest, emitter.dropped, warnings, producers, options)
    files.update(outputs)
    manifest["files"] = listed_files(files)
    files["porter-manifest.json"] = manifest_text(manifest)
    if not checked:
        check_generated(files, source)
    stubbed = any(ir.unsupported for ir in ctx.irs.values())
    return Conversion(files, manifest, warnings, 1 if stubbed else 0, translator, emitter, main_class, entry)


def _aside_started(source, ctx, options):
    """A forked child (porter.forked, a conversation) started once the translation is done: it sends back the TPU
    lint's findings (`lint_tpu(source, ctx)`, as tuples; None where the lint raised: this process then lints itself
    and meets the error where it always did), derives the reports' notes (`derive_notes`: they read only the source
    and the translation, settled here) while this process renders and formats the module, waits for what the reports
    read that is settled later (the formatted files, the manifest, the dropped code, the warnings) and sends back the
    notes (as plain data, None where they raised: the reports met the error, this process renders them in order and
    meets it too) with PORTING.md and report.html (`_outputs_with_reports_aside`). One child for the three: a fork
    of the grown process costs both processes a copy of every memory page either writes afterwards, and the reports
    start without a fork, in a process that has loaded their templates meanwhile."""
    from porter.forked import Forked, can_fork

    if not can_fork():
        return None
    reports = [produce for produce in _extra_outputs() if produce.__module__ == REPORT_PRODUCER]

    def conversation(channel):
        channel.send(_or_none(lambda: [_finding_fields(finding) for finding in lint_tpu(source, ctx)]))
        note_fields = _or_none(lambda: _note_fields(source, ctx))  # while the parent renders and formats the module
        _take_notes(note_fields, ctx)  # the notes the reports read, as the parent takes them
        _warm_report_templates()
        told = channel.receive()
        if told is None or len(reports) != 1:  # no reports wanted here
            return
        from porter.report.porting_md import render_porting_md

        files, manifest, dropped, warnings = told
        ctx.generated_files = files
        channel.send((note_fields, {"PORTING.md": render_porting_md(source, ctx, manifest, dropped, warnings),
                                    **reports[0](source, ctx, manifest, options)}))

    return Forked(conversation, conversation=True)


def _warm_report_templates():
    """Load the reports' templates in the child while it waits for the parent (the same environments, kept)."""
    try:
        from porter.report.render import html_environment, markdown_environment

        markdown_environment().get_template("PORTING.md.j2")
        html_environment().get_template("report.html.j2")
    except Exception:  # noqa: BLE001 - only a head start: the rendering loads them again and meets any error
        pass


def _or_none(work):
    try:
        return work()
    except Exception:  # noqa: BLE001 - the parent does the work again and meets the error in order
        return None


def _note_fields(source, ctx):
    from porter.report.adjustments import derive_notes

    return {owner: [(n.line, n.kind, n.text, n.owner, n.method) for n in found]
            for owner, found in derive_notes(source, ctx).items()}


def _take_notes(fields, ctx):
    """The child's notes as `ctx.derived_notes` (read by porter.report.model); nothing where there is no child or
    its notes failed: the reports derive the notes themselves, and meet any error where they always did."""
    if fields is not None:
        from porter.report.adjustments import Note

        ctx.derived_notes = {owner: [Note(*entry) for entry in found] for owner, found in fields.items()}


def _lint_result(fields, source, ctx):
    """The TPU lint's findings, each class's also set on its ModuleIR, as `lint_tpu` leaves them: the forked
    child's `fields`, or (no child, or its lint failed) the lint run here, which raises what the child met."""
    if fields is None:
        return lint_tpu(source, ctx)
    from porter.ir.module_ir import TpuFinding

    findings = [TpuFinding(*entry) for entry in fields]
    for name in source.classes:  # lint_tpu's per-class lists: its sorted findings of the class, in that order
        if name in ctx.irs:
            ctx.irs[name].tpu_findings = [finding for finding in findings if finding.class_name == name]
    return findings


def _finding_fields(finding):
    return finding.line, finding.kind, finding.message, finding.suggestion, finding.class_name


def _outputs(source, ctx, manifest, dropped, warnings, producers, options):
    """{file name: text} of PORTING.md and of the further outputs, made in order."""
    from porter.report.porting_md import render_porting_md

    outputs = {"PORTING.md": render_porting_md(source, ctx, manifest, dropped, warnings)}
    for produce in producers:
        outputs.update(produce(source, ctx, manifest, options))
    return outputs


def _outputs_with_reports_aside(aside, source, ctx, manifest, dropped, warnings, producers, options):
    """`_outputs`, with PORTING.md and report.html rendered by the forked child `aside` (`_aside_started`) while this
    process makes the other outputs and runs the self-check on the Python files (the reports are none); None where
    that cannot be done or did not work out: the caller then makes them in order, which gives the same files or
    raises the same error."""
    reports = [produce for produce in producers if produce.__module__ == REPORT_PRODUCER]
    if options.reports_only or len(reports) != 1:
        aside.abandon()
        return None
    if not aside.tell((ctx.generated_files, manifest, list(dropped), list(warnings))):
        aside.abandon()
        return None
    try:
        made = [None if produce in reports else produce(source, ctx, manifest, options) for produce in producers]
        check_generated({**ctx.generated_files, **{k: v for m in made if m for k, v in m.items()}}, source)
    except Exception:  # noqa: BLE001 - made again in order, the error is the one that order meets first
        aside.abandon()
        return None
    except BaseException:
        aside.abandon()
        raise
    answer = aside.result()
    if answer is None:
        return None
    note_fields, texts = answer
    _take_notes(note_fields, ctx)  # the notes the reports placed (ctx.derived_notes), as in order
    outputs = {"PORTING.md": texts.pop("PORTING.md")}
    for files in made:
        outputs.update(texts if files is None else files)
    return outputs


def _extra_outputs(reports_only=False):
    """Generators of further output files (training script, tests, HTML report) registered by other issues;
    `reports_only`: just the HTML report's."""
    producers = []
    try:
        from porter.outputs import PRODUCERS

        producers.extend(PRODUCERS)
    except ImportError:
        pass
    if reports_only:
        producers = [produce for produce in producers if produce.__module__ == REPORT_PRODUCER]
    return producers


def build_manifest(source, ctx, out, source_path, module_name, main_class, example_inputs, init_args,
                   tpu_findings=(), imported=()):
    """The manifest of one conversion; `imported`: names the module imports from sibling ports (their classes, and
    the stubs in them, are listed under the sibling's own entry: each stub is counted once, where its code is)."""
    try:
        relative = os.path.relpath(source_path.resolve(), out.resolve())
    except ValueError:
        relative = source_path.name
    classes = []
    for name, info in source.classes.items():
        if name in imported and name != main_class:
            continue
        ir = ctx.irs[name]
        inputs = None
        if name == main_class and example_inputs:
            inputs = [e.as_manifest() for e in example_inputs]
            for entry, switches in zip(inputs, ir.io_inputs):  # taken channels-last under `channels_last_io`
                if switches:
                    entry["channels_last_io"] = True
        classes.append({
            "name": name, "source_line": info.line, "status": ir.status, "example_inputs": inputs,
            "unsupported": [{"line": u.line, "construct": u.construct, "reason": u.reason} for u in ir.unsupported],
        })
    entry = {"path": PurePosixPath(Path(relative)).as_posix(), "framework": source.framework, "module": module_name,
             "classes": classes, "tpu_lint": [finding.as_manifest() for finding in tpu_findings]}
    script_lines = script_line_ranges(source)
    if script_lines:  # what importing the source to build the reference model skips (frontend/script_code.py)
        entry["script_lines"] = script_lines
    return {
        "porter_version": __version__,
        "sources": [entry],
        "main_class": main_class,
        "init_args": init_args or {},
        "files": [],
    }


def missing_constructs(path):
    """[(line, construct, reason)] of everything a conversion of `path` would stub, in source order, without writing
    anything (`porter ops --missing FILE`: the same translation `porter convert` runs)."""
    conversion = convert(ConvertOptions(Path(path), Path(path).parent / ".porter-ops-missing"))
    found = {(u["line"], u["construct"], u["reason"]) for source in conversion.manifest["sources"]
             for entry in source["classes"] for u in entry["unsupported"]}
    return sorted(found)
