"""Command line: `porter convert | verify | diff | ops`. User errors print one line and exit 2."""

import argparse
import json
import sys
from pathlib import Path

from porter import __version__
from porter.errors import PorterError, UsageError

EXIT_OK, EXIT_PARTIAL, EXIT_USAGE = 0, 1, 2


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"porter: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def build_parser():
    parser = ArgumentParser(prog="porter", description="Port PyTorch model code to Keras that trains on TPUs.")
    parser.add_argument("--version", action="version", version=f"porter {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)

    convert = commands.add_parser(
        "convert", help="translate a model file into a Keras package",
        description="Translate SRC (a PyTorch model file, read statically, never executed) into OUT: the Keras "
                    "model module, porter-manifest.json, PORTING.md and the other outputs. Exit 0: converted; "
                    "1: written, but the model code has stubs (see PORTING.md); 2: bad input, nothing written.")
    convert.add_argument("source", metavar="SRC", help="model source file (.py)")
    convert.add_argument("-o", "--out", metavar="OUT", help="output directory (default: <SRC stem>_keras/ beside SRC)")
    convert.add_argument("--class", dest="class_name", metavar="NAME",
                         help="main model class (default: the one the file's training code builds, else the last "
                              "class no other class uses)")
    convert.add_argument("--input-shape", dest="input_specs", action="append", default=[], metavar="SPEC",
                         help="example input of the main class, batch excluded, one per forward argument: "
                              "'1,28,28' (float32) or '32:int64:0:64' (dtype and value range)")
    convert.add_argument("--init-args", metavar="JSON", default=None,
                         help="constructor arguments of the main class as a JSON object, e.g. '{\"width\": 32}'")
    convert.add_argument("--weights", metavar="FILE", type=Path,
                         help="torch state_dict (.pt/.pth, loaded with weights_only=True; nested under "
                              "'state_dict'/'model' is fine) or .safetensors; writes OUT/<name>.weights.h5")
    convert.add_argument("--train-script", metavar="FILE", type=Path,
                         help="file holding the training code when it is not in SRC")
    convert.add_argument("--force", action="store_true",
                         help="replace a previous porter output in OUT (only files its manifest lists)")

    ops = commands.add_parser("ops", help="print the table of supported torch ops")
    ops.add_argument("--format", choices=("markdown", "text"), default="text")
    from porter.commands import COMMANDS

    for module in COMMANDS.values():
        module.add_parser(commands)
    return parser


def parse_init_args(text):
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as error:
        raise UsageError(f"--init-args is not valid JSON ({error})", hint="e.g. --init-args '{\"width\": 32}'") \
            from None
    if not isinstance(value, dict):
        raise UsageError("--init-args must be a JSON object", hint="e.g. --init-args '{\"width\": 32}'")
    return value


def run_convert(args):
    from porter.convert import ConvertOptions, convert, default_out
    from porter.output import check_target, write_tree

    init_args = parse_init_args(args.init_args)
    source = Path(args.source)
    out = Path(args.out) if args.out else default_out(source)
    check_target(out, args.force)
    options = ConvertOptions(source, out, args.class_name, args.input_specs, init_args, args.weights, args.force,
                             args.train_script)
    conversion = convert(options)
    files = dict(conversion.files)
    if args.weights is not None:
        from porter.weights.convert_weights import weights_file

        name, payload = weights_file(conversion, args.weights, options)
        files[name] = payload
        manifest = json.loads(files["porter-manifest.json"])
        manifest["files"] = sorted(set(manifest["files"]) | {name})
        files["porter-manifest.json"] = json.dumps(manifest, indent=2) + "\n"
    write_tree(out, files, force=args.force)
    for warning in conversion.warnings:
        print(f"porter: warning: {warning}", file=sys.stderr)
    stubs = sum(len(c["unsupported"]) for s in conversion.manifest["sources"] for c in s["classes"])
    print(f"porter: wrote {out} ({len(files)} files, main class {conversion.main_class}"
          f"{f', {stubs} stubs: see PORTING.md' if stubs else ''})")
    return conversion.exit_code


def run_ops(args):
    from porter.rules.coverage import coverage_table

    print(coverage_table(args.format))
    return EXIT_OK


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    handlers = {"convert": run_convert, "ops": run_ops}
    try:
        from porter.commands import EXTRA_COMMANDS
    except ImportError:
        EXTRA_COMMANDS = {}
    handlers.update(EXTRA_COMMANDS)
    try:
        return handlers[args.command](args)
    except PorterError as error:
        print(f"porter: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("porter: interrupted; the output directory was left as it was", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
