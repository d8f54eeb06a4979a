"""`porter ir FILE [--class NAME] [--after STAGE]`: print the IR porter builds for FILE (nothing is written).

The same reading and translation `porter convert` runs (no torch, TensorFlow or mxnet import), printed by
porter/ir/printer.py: deterministic, so golden tests hold the dumps (tests/ir/golden/).
"""

import sys
from pathlib import Path

from porter.errors import UsageError
from porter.ir.printer import STAGES, print_ir

COMMAND = "ir"


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "ir", help="print the IR porter builds for a model file",
        description="Print, for each module class of FILE, what porter read and decided: constructor parameters, "
                    "attributes, call layouts and the op graph (one node per op, layer call, class call and layout "
                    "conversion, with its source line and the rank/layout/dtype in and out). Nothing is written.")
    parser.add_argument("source", metavar="FILE", help="model source file (.py)")
    parser.add_argument("--class", dest="class_name", metavar="NAME", help="print only this class")
    parser.add_argument("--after", choices=STAGES, default="lowering",
                        help="stage to print: frontend (what the reader found), lowering (default: with the op "
                             "graph), tpu-lint (with TPU findings)")
    parser.add_argument("--input-shape", dest="input_specs", action="append", default=[], metavar="SPEC",
                        help="example input of the main class, as for porter convert")
    parser.add_argument("--main-class", dest="main_class", metavar="NAME",
                        help="main model class, as porter convert's --class")
    return parser


def run(args):
    from porter.convert import ConvertOptions, convert

    source_path = Path(args.source)
    conversion = convert(ConvertOptions(source_path, source_path.parent / f".porter-ir-{source_path.stem}",
                                        class_name=args.main_class, input_specs=list(args.input_specs)),
                         read_only=True)
    source, ctx = conversion.translator.source, conversion.translator.ctx
    if args.class_name is not None and args.class_name not in source.classes:
        known = ", ".join(source.classes) or "none"
        raise UsageError(f"{source.display_path}: no module class {args.class_name!r} (classes: {known})")
    sys.stdout.write(print_ir(source, ctx, conversion.main_class, args.class_name, args.after))
    return 0
