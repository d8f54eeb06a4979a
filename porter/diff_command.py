"""`porter diff SRC -o OUT`: what `porter convert --force` would change in OUT, as a diff; never writes.

Regenerates the conversion in memory with the options OUT's porter-manifest.json records (main class, constructor
arguments, example inputs), then compares file by file with what is in OUT. Exit 0: no difference (and no output);
1: differences (printed); 2: usage (no porter output in OUT, bad SRC, bad options) — the convention of
`black --check --diff`. Only files porter writes are compared: files the user added to OUT are left out, and so are
binary files (`--weights` output). The equivalence sections `porter verify` fills into the reports are verify's,
not convert's, so they are carried over before comparing (an unchanged model after `porter verify` diffs clean).
The regenerated tree is what `convert --force` would write: it keeps OUT's weights file and the manifest's record of
it, so a fresh `convert --weights` output diffs clean. When the model code changed since the weights were written,
diff compares the recorded parameter layout with the regenerated model's (building it: only then is TensorFlow
imported) and says on stderr that OUT/<name>.weights.h5 no longer fits (exit 1), or that it cannot tell; likewise
for train_tpu.py checkpoints in OUT/tpu_run/ made with the model code on disk.
"""

import difflib
import json
import shutil
import sys
from pathlib import Path

from porter.errors import UsageError
from porter.output import listed_files, manifest_text
from porter.weights.record import keep_previous_weights, stale_checkpoints, weights_misfit

COMMAND = "diff"
EXIT_SAME, EXIT_DIFFERENT, EXIT_USAGE = 0, 1, 2
MANIFEST = "porter-manifest.json"
REPORTS = ("PORTING.md", "report.html")
_COLOURS = {"header": "\033[1m", "hunk": "\033[36m", "delete": "\033[31m", "insert": "\033[32m",
            "change": "\033[33m", "reset": "\033[0m"}


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "diff", help="show what re-converting SRC would change in OUT (writes nothing)",
        description="Regenerate SRC's conversion in memory, with the options recorded in OUT's porter-manifest.json, "
                    "and print a unified diff against the files in OUT. Nothing is written. Exit 0: no difference; "
                    "1: differences, or OUT's .weights.h5 no longer fits the model (said on stderr); 2: usage error. Apply the changes with `porter convert SRC -o OUT --force`, "
                    "or pipe the diff to `patch -p1 -d OUT`.")
    parser.add_argument("source", metavar="SRC", help="model source file (.py)")
    parser.add_argument("-o", "--out", metavar="OUT",
                        help="a previous porter output directory (default: <SRC stem>_keras/ beside SRC)")
    parser.add_argument("--side-by-side", action="store_true",
                        help="show the changed lines in two columns (on disk | regenerated) instead of a unified diff")
    parser.add_argument("-U", "--context", type=int, default=3, metavar="N",
                        help="lines of context around each change (default 3)")
    parser.add_argument("--width", type=int, default=None, metavar="COLUMNS",
                        help="total width of --side-by-side output (default: the terminal's, else 160)")
    parser.add_argument("--color", "--colour", dest="color", choices=("auto", "always", "never"), default="auto",
                        help="colour the diff: auto (only when stdout is a terminal), always or never")
    parser.add_argument("--class", dest="class_name", metavar="NAME",
                        help="main model class (default: the one OUT's manifest records)")
    parser.add_argument("--input-shape", dest="input_specs", action="append", default=None, metavar="SPEC",
                        help="example input of the main class (default: those OUT's manifest records)")
    parser.add_argument("--init-args", metavar="JSON", default=None,
                        help="constructor arguments as a JSON object (default: those OUT's manifest records)")
    parser.add_argument("--train-script", metavar="FILE", type=Path,
                        help="file holding the training code when it is not in SRC")
    return parser


def run(args):
    from porter.convert import default_out

    if args.context < 0:
        raise UsageError("--context must be 0 or more")
    if args.width is not None and args.width < 40:
        raise UsageError("--width must be at least 40")
    source = Path(args.source)
    out = Path(args.out) if args.out else default_out(source)
    manifest = _read_manifest(out)
    fresh = regenerate(source, out, manifest, args)
    fresh, _, _ = keep_previous_weights(out, fresh)  # as `convert --force` writes it: OUT's weights file stays
    pairs = compare_trees(out, fresh, manifest)
    fits, message = weights_misfit(out, fresh, str(source))
    for warning in ([message] if message else []) + stale_checkpoints(out, fresh):
        print(f"porter: warning: {warning}", file=sys.stderr)
    if not pairs:
        return EXIT_DIFFERENT if fits is False else EXIT_SAME
    colour = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    if args.side_by_side:
        width = args.width or (shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 160)
        text = side_by_side(pairs, args.context, width, colour)
    else:
        text = unified(pairs, args.context, colour)
    sys.stdout.write(text)
    sys.stdout.flush()
    return EXIT_DIFFERENT


def _read_manifest(out):
    path = out / MANIFEST
    if not out.is_dir():
        raise UsageError(f"{out} is not a directory", hint="pass the directory `porter convert` wrote, with -o")
    if not path.is_file():
        raise UsageError(f"{out} holds no {MANIFEST}; it is not a porter output",
                         hint="convert first: porter convert SRC -o OUT")
    try:
        manifest = json.loads(path.read_text())
    except (ValueError, OSError) as error:
        raise UsageError(f"{path} cannot be read ({error})", hint="re-create OUT with porter convert --force") \
            from None
    if not isinstance(manifest, dict) or not manifest.get("sources"):
        raise UsageError(f"{path} is not a porter manifest", hint="re-create OUT with porter convert --force")
    return manifest


def recorded_inputs(manifest):
    """The main class's example inputs recorded in the manifest, as --input-shape specs (None if absent)."""
    main = manifest.get("main_class")
    for source in manifest.get("sources", []):
        for entry in source.get("classes", []):
            if entry.get("name") == main and entry.get("example_inputs"):
                specs = []
                for example in entry["example_inputs"]:
                    spec = ",".join(str(s) for s in example.get("shape", []))
                    dtype = example.get("dtype") or "float32"
                    low, high = example.get("low"), example.get("high")
                    if low is not None or high is not None:
                        spec += f":{dtype}:{_number(low)}:{_number(high)}"
                    elif dtype != "float32":
                        spec += f":{dtype}"
                    specs.append(spec)
                return specs
    return None


def _number(value):
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def regenerate(source, out, manifest, args=None):
    """{relative path: text} that `porter convert` would write into OUT now, with OUT's recorded options."""
    from porter.cli import parse_init_args
    from porter.convert import ConvertOptions
    from porter.package import convert_with_siblings as convert  # as `porter convert FILE` does

    class_name = getattr(args, "class_name", None)
    init_args = parse_init_args(args.init_args) if getattr(args, "init_args", None) is not None else \
        manifest.get("init_args") or {}
    specs = getattr(args, "input_specs", None)
    train_script = getattr(args, "train_script", None)
    recorded_class = class_name or manifest.get("main_class")

    def attempt(name, inputs):
        return convert(ConvertOptions(source, out, name, list(inputs or []), init_args, None, True, train_script))

    try:
        conversion = attempt(recorded_class, specs)
    except UsageError:
        if class_name is not None or recorded_class is None:
            raise
        print(f"porter: warning: class {recorded_class} recorded in {out / MANIFEST} is not in {source}; "
              "diffing against the class porter would choose now", file=sys.stderr)
        recorded_class = None
        conversion = attempt(None, specs)
    recorded = recorded_inputs(manifest)
    if specs is None and recorded and recorded_inputs(conversion.manifest) != recorded:
        conversion = attempt(recorded_class, recorded)  # OUT was converted with explicit --input-shape
    return dict(conversion.files)


def compare_trees(out, fresh, manifest):
    """[(relative path, text on disk or None, regenerated text or None)] for files that differ, in a stable order."""
    from porter.report.equivalence import carry_verify_regions

    fresh = dict(fresh)
    listed = [f for f in manifest.get("files", []) if isinstance(f, str)]
    binary = []
    for name in listed:
        path = out / name
        if name not in fresh and path.is_file() and _read_text(path) is None:
            binary.append(name)  # e.g. <name>.weights.h5 from --weights: not regenerated by a diff
    if binary and MANIFEST in fresh:
        regenerated = json.loads(fresh[MANIFEST])
        regenerated["files"] = listed_files([*regenerated["files"], *binary])
        fresh[MANIFEST] = manifest_text(regenerated)
    names = sorted((set(fresh) | set(listed)) - set(binary), key=lambda n: (n.endswith((".md", ".html", ".json")), n))
    pairs = []
    for name in names:
        path = out / name
        on_disk = _read_text(path) if path.is_file() else None
        if path.is_file() and on_disk is None:
            continue  # a binary file where porter now writes text: nothing sensible to show
        new = fresh.get(name)
        if name in REPORTS and on_disk is not None and new is not None:
            new = carry_verify_regions(new, on_disk)
        if on_disk != new:
            pairs.append((name, on_disk, new))
    return pairs


def _read_text(path):
    try:
        return path.read_bytes().decode("utf-8")
    except (UnicodeDecodeError, OSError):
        return None


# ---------------------------------------------------------------------------------------------------- output


def _paint(text, kind, colour):
    return f"{_COLOURS[kind]}{text}{_COLOURS['reset']}" if colour else text


def _lines(text):
    if text is None:
        return []
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def unified(pairs, context, colour):
    chunks = []
    for name, old, new in pairs:
        before = f"a/{name}" if old is not None else "/dev/null"
        after = f"b/{name}" if new is not None else "/dev/null"
        for line in difflib.unified_diff(_lines(old), _lines(new), before, after, n=context):
            if line.startswith(("---", "+++")):
                kind = "header"
            elif line.startswith("@@"):
                kind = "hunk"
            elif line.startswith("-"):
                kind = "delete"
            elif line.startswith("+"):
                kind = "insert"
            else:
                kind = None
            if not line.endswith("\n"):
                line += "\n"
            chunks.append(_paint(line.rstrip("\n"), kind, colour) + "\n" if kind and colour else line)
    return "".join(chunks)


def side_by_side(pairs, context, width, colour):
    """Two columns, on disk | regenerated, with sdiff markers: '|' changed, '<' only on disk, '>' only regenerated."""
    number = 5
    column = max(10, (width - 2 * (number + 1) - 3) // 2)
    out = []
    for name, old, new in pairs:
        header = f"{'a/' + name if old is not None else '/dev/null'}  |  {'b/' + name if new is not None else '/dev/null'}"
        out.append(_paint(header, "header", colour) + "\n")
        left, right = (old or "").splitlines(), (new or "").splitlines()
        matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
        for group in matcher.get_grouped_opcodes(context):
            first, last = group[0], group[-1]
            out.append(_paint(f"@@ -{first[1] + 1},{last[2] - first[1]} +{first[3] + 1},{last[4] - first[3]} @@",
                              "hunk", colour) + "\n")
            for tag, i1, i2, j1, j2 in group:
                rows = max(i2 - i1, j2 - j1)
                for k in range(rows):
                    i, j = i1 + k, j1 + k
                    left_line = (i + 1, left[i]) if i < i2 else None
                    right_line = (j + 1, right[j]) if j < j2 else None
                    marker = {"equal": " ", "replace": "|", "delete": "<", "insert": ">"}[tag]
                    if tag == "replace" and (left_line is None or right_line is None):
                        marker = "<" if right_line is None else ">"
                    out.extend(_side_rows(left_line, right_line, marker, column, number, colour))
    return "".join(out)


def _side_rows(left, right, marker, column, number, colour):
    def pieces(item):
        if item is None:
            return [("", "")]
        text = item[1].expandtabs(4)
        parts = [text[k:k + column] for k in range(0, len(text), column)] or [""]
        return [(str(item[0]) if index == 0 else "", part) for index, part in enumerate(parts)]

    kind = {" ": None, "|": "change", "<": "delete", ">": "insert"}[marker]
    left_parts, right_parts = pieces(left), pieces(right)
    rows = []
    for index in range(max(len(left_parts), len(right_parts))):
        ln, lt = left_parts[index] if index < len(left_parts) else ("", "")
        rn, rt = right_parts[index] if index < len(right_parts) else ("", "")
        mark = marker if index == 0 else " "
        line = f"{ln:>{number}} {lt:<{column}} {mark} {rn:>{number}} {rt}".rstrip()
        rows.append((_paint(line, kind, colour) if kind else line) + "\n")
    return rows
