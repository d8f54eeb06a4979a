"""The source script's argparse flags: `parser.add_argument('--lr', type=float, default=1.0, help=...)`.

They become flags of train_tpu.py with the same names and defaults; the hyperparameters that read them
(`lr=args.lr`) become parameters of the build functions.
"""

from dataclasses import dataclass

import libcst as cst

from porter.training.values import Scope, Value, keyword_args, positional_args

ACTIONS = {"store", "store_true", "store_false", "store_const", "count", "append"}
TYPES = {"int", "float", "str"}


@dataclass
class Flag:
    dest: str
    options: list  # option strings as the source spells them
    default: Value | None
    type: str | None = None
    action: str | None = None
    help: str | None = None
    choices: Value | None = None
    nargs: Value | None = None
    metavar: str | None = None
    const: Value | None = None
    line: int | None = None

    def argument_code(self, options=None, help_suffix=""):
        """`parser.add_argument(...)` arguments as Python source."""
        parts = [repr(o) for o in (options or self.options)]
        if self.action and self.action != "store":
            parts.append(f"action={self.action!r}" if self.action in ACTIONS else f"action={self.action}")
        if self.type:
            parts.append(f"type={self.type}")
        if self.nargs is not None:
            parts.append(f"nargs={self.nargs.code}")
        if self.const is not None:
            parts.append(f"const={self.const.code}")
        if self.choices is not None:
            parts.append(f"choices={self.choices.code}")
        if self.default is not None and not (self.action in ("store_true", "store_false")
                                             and self.default.value == (self.action == "store_false")):
            parts.append(f"default={self.default.code}")
        parts.append(f"dest={self.dest!r}")
        if self.metavar:
            parts.append(f"metavar={self.metavar!r}")
        text = (self.help or "").replace("%", "%%") if self.help and "%(" not in self.help else (self.help or "")
        text = (text + help_suffix).strip()
        if text:
            parts.append(f"help={text!r}")
        return ", ".join(parts)


def read_flags(index, values, notes):
    """Flags of every `*.add_argument('--name', ...)` call in the training code, in source order."""
    flags = {}
    for call in index.calls:
        if not call.callee.endswith(".add_argument"):
            continue
        node = call.node
        options = []
        for arg in positional_args(node):
            if isinstance(arg, cst.SimpleString) and isinstance(arg.evaluated_value, str):
                options.append(arg.evaluated_value)
        line = index.line(node)
        if not options or not options[0].startswith("-"):
            notes.append((line, f"positional argument {options[0] if options else '?'!r} of the source's "
                                "parser is not a flag of train_tpu.py"))
            continue
        keywords = keyword_args(node)
        long = next((o for o in options if o.startswith("--")), options[0])
        dest = long.lstrip("-").replace("-", "_")
        if "dest" in keywords and isinstance(keywords["dest"], cst.SimpleString):
            dest = keywords["dest"].evaluated_value
        module = Scope()
        default = values.translate(keywords["default"], module) if "default" in keywords else None
        if "default" in keywords and (default is None or default.refs):
            notes.append((line, f"the default of {long} ({index.source.code_of(keywords['default']).strip()}) "
                                "cannot be read statically; train_tpu.py uses None"))
            default = Value("None", None)
        action = None
        if "action" in keywords:
            value = keywords["action"]
            if isinstance(value, cst.SimpleString):
                action = value.evaluated_value
            else:
                action = index.source.code_of(value).strip()
                if index.resolve(value) == "argparse.BooleanOptionalAction":
                    action = "argparse.BooleanOptionalAction"
                else:
                    notes.append((line, f"{long}: custom argparse action {action} dropped"))
                    action = None
        if action in ("store_true", "store_false") and default is None:
            default = Value(repr(action == "store_false"), action == "store_false")
        type_name = None
        if "type" in keywords:
            written = index.source.code_of(keywords["type"]).strip()
            if written in TYPES:
                type_name = written
            else:
                notes.append((line, f"{long}: type={written} is read as a string by train_tpu.py"))
        help_text = None
        if "help" in keywords and isinstance(keywords["help"], (cst.SimpleString, cst.ConcatenatedString)):
            help_text = keywords["help"].evaluated_value
        metavar = keywords.get("metavar")
        metavar = metavar.evaluated_value if isinstance(metavar, cst.SimpleString) else None
        flag = Flag(dest, options, default, type_name, action, help_text,
                    values.translate(keywords["choices"], module) if "choices" in keywords else None,
                    values.translate(keywords["nargs"], module) if "nargs" in keywords else None,
                    metavar, values.translate(keywords["const"], module) if "const" in keywords else None, line)
        flags.setdefault(dest, flag)
    return flags


def namespace_names(index):
    """Names bound to `parser.parse_args()` anywhere, plus `args`-like parameters of functions called with them."""
    names = set()
    for assignment in index.assignments:
        value = assignment.value
        if isinstance(value, cst.Subscript):
            value = value.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in (
                "parse_args", "parse_known_args"):
            names.add(assignment.target)
    return names
