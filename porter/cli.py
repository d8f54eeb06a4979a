"""Command line: `porter convert | verify | diff | ops`. User errors print one line and exit 2."""

import argparse
import json
import math
import os
import sys
import traceback
from pathlib import Path

from porter import __version__, quick_exit
from porter.errors import InternalError, PorterError, UsageError, WeightsError
from porter.gc_tuning import fewer_collections, pause_until_settled

EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a command whose reader closed the pipe
FRAMEWORKS = ("torch", "mxnet", "auto")
INIT_ARGS_HINT = "e.g. --init-args '{\"width\": 32}'"


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"porter: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


BUILT_IN_COMMANDS = ("convert", "ops")


def build_parser(command=None):
    """porter's argument parser; `command`: the built-in command the arguments name, whose parse needs no other
    command's parser (the other commands' modules are not imported then: a tenth of a second's start-up before
    `porter convert` starts reading its source)."""
    parser = ArgumentParser(prog="porter", description="Port PyTorch model code to Keras that trains on TPUs.")
    parser.add_argument("--version", action="version", version=f"porter {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)

    convert = commands.add_parser(
        "convert", help="translate a model file into a Keras package",
        description="Translate SRC (a PyTorch model file, read statically, never executed) into OUT: the Keras "
                    "model module, porter-manifest.json, PORTING.md and the other outputs. Exit 0: converted; "
                    "1: written, but the model code has stubs (see PORTING.md); 2: bad input, nothing written. "
                    "SRC may be a folder (a package): every model file in it converts, mirrored under OUT, with one "
                    "manifest; --class NAME (or sub/file.py:NAME) names the main model.")
    convert.add_argument("source", metavar="SRC", help="model source file (.py), or a package folder: every model "
                                                      "file in it converts, mirrored under OUT")
    convert.add_argument("-o", "--out", metavar="OUT", help="output directory (default: <SRC stem>_keras/ beside SRC)")
    convert.add_argument("--class", dest="class_name", metavar="NAME",
                         help="main model class, or a factory function of the file building it (`resnet50`; "
                              "default: the one the file's training code builds, else the class the file's factories "
                              "return, else the last class no other class uses)")
    convert.add_argument("--input-shape", dest="input_specs", action="append", default=[], metavar="SPEC",
                         help="example input of the main class, batch excluded, one per forward argument: "
                              "'1,28,28' (float32), '32:int64:0:64' (dtype and value range), or '():int64:1:33' "
                              "(one value per example: sequence lengths, timesteps)")
    convert.add_argument("--init-args", metavar="JSON", default=None,
                         help="constructor arguments of the main class (of its factory, where one builds it) as a "
                              "JSON object, e.g. '{\"width\": 32}'")
    convert.add_argument("--weights", metavar="FILE", type=Path,
                         help="torch state_dict (.pt/.pth, loaded with weights_only=True; nested under "
                              "'state_dict'/'model' is fine) or .safetensors; writes OUT/<name>.weights.h5")
    convert.add_argument("--train-script", metavar="FILE", type=Path,
                         help="file holding the training code when it is not in SRC")
    convert.add_argument("--channels-last-io", action="store_true", dest="channels_last_io",
                         help="the main class takes and returns images channels-last (NHWC): a convnet runs "
                              "without a Transpose (`model.channels_last_io = False` restores torch's layout)")
    convert.add_argument("--framework", choices=FRAMEWORKS, default="auto",
                         help="source framework (default: auto, from the file's imports)")
    convert.add_argument("--force", action="store_true",
                         help="replace a previous porter output in OUT (only files its manifest lists)")

    ops = commands.add_parser(
        "ops", help="list the torch ops porter translates",
        description="List every torch module, function and Tensor method porter translates, from its rule "
                    "registry. text (default): one 'family<TAB>torch name' line per op, for grep/cut; "
                    "markdown: the README's table; json: {family: [names]}.")
    ops.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                     help="output format (default: text, one op per line)")
    ops.add_argument("--missing", metavar="PATH", type=Path,
                     help="instead: what PATH (a model file, or a package folder: each of its model files) uses that "
                          "porter does not translate yet, one 'FILE:LINE<TAB>construct<TAB>reason' line each (the "
                          "stubs a conversion would write; nothing is written)")
    if command in BUILT_IN_COMMANDS:
        return parser
    from porter.commands import COMMANDS

    for module in COMMANDS.values():
        module.add_parser(commands)
    return parser


def parse_init_args(text):
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise UsageError(f"--init-args is not valid JSON ({str(error)[:200]})", hint=INIT_ARGS_HINT) from None
    if not isinstance(value, dict):
        raise UsageError(f"--init-args must be a JSON object, not {type(value).__name__}", hint=INIT_ARGS_HINT)
    bad = [key for key in value if not key.isidentifier()]
    if bad:
        raise UsageError(f"--init-args: {bad[0]!r} is not a parameter name", hint=INIT_ARGS_HINT)
    return value


def parse_input_specs(specs):
    """Check every --input-shape before converting (sizes, dtype, and a value range with low < high)."""
    from porter.convert import parse_input_spec

    parsed = []
    for spec in specs:
        example = parse_input_spec(spec)
        low, high = example.low, example.high
        for bound in (low, high):
            if bound is not None and not math.isfinite(bound):
                raise UsageError(f"--input-shape {spec!r}: low/high must be finite numbers")
        if low is not None and high is not None and not low < high:
            raise UsageError(f"--input-shape {spec!r}: low ({low:g}) must be below high ({high:g})")
        parsed.append(example)
    return parsed


def check_init_args(conversion, init_args, source_display):
    """Every --init-args key must name a constructor parameter of the main class (read from the source)."""
    source = getattr(conversion.translator, "source", None)
    info = source.classes.get(conversion.main_class) if source is not None else None
    if not init_args or info is None:
        return
    entry = getattr(conversion, "model_factory", None)
    if entry is not None:
        check_factory_args(entry, source, init_args, source_display)
        return
    init = info.find_method("__init__")
    if init is None:
        if info.container_base is None:
            raise UsageError(f"--init-args: {conversion.main_class} takes no constructor arguments",
                             source_display, info.line)
        return
    parameters = init.params
    if parameters.star_kwarg is not None:
        return
    names = {p.name.value for p in (*parameters.posonly_params, *parameters.params, *parameters.kwonly_params)}
    names.discard("self")
    unknown = sorted(set(init_args) - names)
    if unknown:
        raise UsageError(f"--init-args: {conversion.main_class} has no constructor parameter "
                         f"{', '.join(map(repr, unknown))}", source_display, info.line,
                         hint=f"its parameters: {', '.join(sorted(names)) or 'none'}")


def check_factory_args(entry, source, init_args, source_display):
    """--init-args of a main class built by a factory are the factory's: its parameters the port's factory keeps
    and the keyword arguments it hands on to the class, or every parameter of a factory the port carries as it is."""
    from porter.frontend.model_entry import factory_node

    parameters = factory_node(source, entry).params
    own = {p.name.value for p in (*parameters.posonly_params, *parameters.params, *parameters.kwonly_params)} - {"cls"}
    if entry.as_written:
        unknown = [] if parameters.star_kwarg is not None else sorted(set(init_args) - own)
    else:
        kept = {name for name, _ in entry.parameters}
        unknown = sorted(set(init_args) & own - kept) if entry.takes_kwargs else sorted(set(init_args) - kept)
    if unknown:
        raise UsageError(f"--init-args: {', '.join(map(repr, unknown))} cannot be given to {entry.function}(), which "
                         f"builds {entry.class_name}", source_display, entry.line,
                         hint=f"give {entry.class_name}'s own arguments, or name another factory or the class with "
                              f"--class")


def check_path_text(path, what):
    """Paths whose names are not valid text (undecodable bytes) cannot be written into code, reports or the
    terminal: refuse them up front rather than fail halfway."""
    text = str(path)
    if any("\udc80" <= char <= "\udcff" for char in text):
        raise UsageError(f"{what} {os.fsencode(text).decode('utf-8', 'backslashreplace')}: "
                         "the name is not valid UTF-8", hint="rename it")


def check_framework(conversion, requested, source_display):
    detected = conversion.manifest["sources"][0].get("framework", "torch")
    if requested not in ("auto", detected):
        raise UsageError(f"--framework {requested}: the file reads as a {detected} source", source_display,
                         hint="pass --framework auto or the framework the file imports")


def run_convert(args):
    from porter.frontend.syntax_check import abandon_early_checks, start_early_check

    pause_until_settled()  # the parse below makes no garbage: no collection until it is done (gc_tuning.py)
    source = Path(args.source)
    if _is_file(source):  # CPython's check and libcst's parse of it run beside the imports below (syntax_check.py)
        start_early_check(source, str(source))
    try:
        return _run_convert(args)
    finally:
        abandon_early_checks()


def _is_file(path):
    try:
        return path.is_file()
    except (OSError, ValueError):  # a name the system refuses: reported where it always was
        return False


def _run_convert(args):
    from porter.convert import ConvertOptions, convert, default_out
    from porter.output import check_target, write_tree

    init_args = parse_init_args(args.init_args)
    parse_input_specs(args.input_specs)
    source = Path(args.source)
    package = source.is_dir()  # a source package: every model file, mirrored under OUT (porter.package)
    if not package:  # a file of a package: the model files it imports from are mirrored under OUT too
        from porter.package import convert_with_siblings as convert
    if package:
        from porter.package import convert_package as convert
        from porter.package import default_package_out as default_out
    out = Path(args.out) if args.out else default_out(source)
    for path, what in ((source, "SRC"), (out, "OUT"), (args.weights, "--weights"), (args.train_script,
                                                                                 "--train-script")):
        if path is not None:
            check_path_text(path, what)
    check_target(out, args.force)
    if args.weights is not None and not args.weights.is_file():
        raise WeightsError("no such weights file" if not args.weights.exists() else "not a file",
                           str(args.weights), hint="check the --weights path")
    options = ConvertOptions(source, out, args.class_name, args.input_specs, init_args, args.weights, args.force,
                             args.train_script)
    options.channels_last_io = args.channels_last_io
    options.reports_aside = True  # a process of its own: the reports are rendered beside the rest (porter.forked)
    if "framework" in getattr(ConvertOptions, "__dataclass_fields__", {}):
        options.framework = args.framework
    conversion = convert(options)
    quick_exit.keep(conversion)  # dropped with the process, not freed object by object
    main_source = getattr(conversion.translator, "source", None)  # a package's main file
    shown = main_source.display_path if package and main_source is not None else str(source)
    check_framework(conversion, args.framework, shown)
    check_init_args(conversion, init_args, shown)
    files = dict(conversion.files)
    warnings = conversion.warnings  # the weights step may add to them
    from porter.weights.record import load_hint, stale_checkpoints, weights_step

    if package:
        from porter.package import weights_view

    files, kept, loadable = weights_step(weights_view(conversion) if package else conversion, files, out,
                                         args.weights, args.force, options, warnings)
    warnings += stale_checkpoints(out, files)
    write_tree(out, files, force=args.force, keep=(source, args.weights, args.train_script, kept))
    for warning in warnings:
        print(f"porter: warning: {warning}", file=sys.stderr)
    stubs = sum(len(c["unsupported"]) for s in conversion.manifest["sources"] for c in s["classes"])
    if package:
        report_package(out, files, kept, conversion)
    else:
        factory = conversion.manifest.get("model_factory")
        print(f"porter: wrote {out} ({len(files) + (kept is not None)} files, main class {conversion.main_class}"
              f"{f' built by {factory}()' if factory else ''}{f', {stubs} stubs: see PORTING.md' if stubs else ''})")
    if loadable:
        hint = load_hint(out, files, loadable)
        folder = Path(conversion.manifest["sources"][0]["module"]).parent  # a package's main module sits in OUT/sub
        print(f"porter: {hint.replace(f'(with {out} on', f'(with {out / folder} on') if package else hint}")
    from porter.passes.tpu_lint_kinds import summary_line

    tpu_summary = summary_line([f for s in conversion.manifest["sources"] for f in s.get("tpu_lint", [])])
    if tpu_summary:
        print(f"porter: {tpu_summary}")  # advice only: findings never change the exit code
    return conversion.exit_code


def report_package(out, files, kept, conversion):
    """What `porter convert DIR` wrote: the totals, then one line per file with stubs."""
    manifest = conversion.manifest
    stubbed = [(entry, sum(len(c["unsupported"]) for c in entry["classes"])) for entry in manifest["sources"]]
    stubbed = [(entry, count) for entry, count in stubbed if count]
    main = f"main class {conversion.main_class}" if conversion.main_class else "no main class"
    left_out = manifest.get("skipped", [])
    print(f"porter: wrote {out} ({len(files) + (kept is not None)} files, {len(manifest['sources'])} model modules, "
          f"{main}{f', {len(left_out)} files left out' if left_out else ''}"
          f"{f', stubs in {len(stubbed)} files: see PORTING.md' if stubbed else ''})")
    for entry, count in stubbed:
        print(f"porter: {entry['module']}: {count} stubs")


def run_ops(args):
    from porter.convert import missing_constructs
    from porter.package import missing_in_package
    from porter.rules.coverage import coverage_table

    if args.missing is None:
        print(coverage_table(args.format))
        return EXIT_OK
    check_path_text(args.missing, "--missing")
    if args.missing.is_dir():
        missing, problems = missing_in_package(args.missing)
    else:
        missing, problems = [(str(args.missing), *use) for use in missing_constructs(args.missing)], []
    if args.format == "json":
        print(json.dumps([{"path": path, "line": line, "construct": construct, "reason": reason}
                          for path, line, construct, reason in missing], indent=2))
    else:
        for path, line, construct, reason in missing:
            print(f"{path}:{line}\t{construct}\t{reason}")
    for problem in problems:
        print(f"porter: {problem}", file=sys.stderr)
    constructs = len({construct for _, _, construct, _ in missing})
    print(f"porter: {args.missing}: {len(missing)} use(s) of {constructs} construct(s) porter does not translate "
          f"yet" if missing else f"porter: {args.missing}: everything it uses is translated", file=sys.stderr)
    return EXIT_OK


def main(argv=None):
    """Run one command; output cut short by a closed pipe (`porter ops | head`) ends quietly with 141."""
    try:
        with fewer_collections():  # a quarter of a large conversion's CPU went to the collector (gc_tuning.py)
            code = _run(argv)
            sys.stdout.flush()
            if quick_exit.wanted(argv):  # the program ends here, without freeing the conversion (quick_exit.py),
                quick_exit.end(code)  # and before the default thresholds are back: they start a 0.2 s collection
            quick_exit.release()  # a caller that goes on (the tests: dozens of conversions a process) frees it
        return code
    except BrokenPipeError:
        # the reader went away: stop writing, and keep the interpreter's final flush from failing again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE


def keep_negative_sizes(argv):
    """argparse takes the `-1,5` of `--input-shape -1,5` for an option and reports "expected one argument": join
    such a value to its flag so that the size check names the negative size."""
    argv = list(sys.argv[1:] if argv is None else argv)
    joined = []
    for arg in argv:
        if joined and joined[-1] == "--input-shape" and arg[:1] == "-" and arg[1:2].isdigit():
            joined[-1] = f"--input-shape={arg}"
        else:
            joined.append(arg)
    return joined


def _run(argv):
    argv = keep_negative_sizes(argv)
    built_in = argv[0] if argv and argv[0] in BUILT_IN_COMMANDS else None  # `porter convert ...`: no other command
    parser = build_parser(built_in)
    args = parser.parse_args(argv)
    handlers = {"convert": run_convert, "ops": run_ops}
    if built_in is None:
        try:
            from porter.commands import EXTRA_COMMANDS
        except ImportError:
            EXTRA_COMMANDS = {}
        handlers.update(EXTRA_COMMANDS)
    try:
        return handlers[args.command](args)
    except InternalError as error:
        print(f"porter: internal error: {error} (a porter bug: please report it with the source file)",
              file=sys.stderr)
        return EXIT_INTERNAL
    except PorterError as error:
        print(f"porter: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        raise  # the reader closed the pipe: main() ends quietly
    except Exception as error:  # noqa: BLE001 - any other exception is a porter bug: one line, exit 3
        return _internal_error(error)
    except KeyboardInterrupt:
        print("porter: interrupted; the output directory holds its previous contents or the complete new output, "
              "never a mix", file=sys.stderr)
        return EXIT_INTERRUPTED


def _internal_error(error):
    """One line naming the exception and where porter raised it; PORTER_DEBUG=1 re-raises for the traceback."""
    if os.environ.get("PORTER_DEBUG"):
        raise error
    frames = traceback.extract_tb(error.__traceback__)
    where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(frames) if "porter" in Path(f.filename).parts),
                 "?")
    print(f"porter: internal error: {type(error).__name__}: {str(error)[:300]} (at {where}; a porter bug: please "
          f"report it with the source file, PORTER_DEBUG=1 shows the traceback)", file=sys.stderr)
    return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
