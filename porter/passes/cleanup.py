"""Cleanup of a translated function body: identity assignments, dead pure computations and lambdas bound to a name
nothing reads (`merge = lambda t: ...` whose `map(merge, (k, v))` wrote it out in place).

Lazy layouts leave two kinds of residue. A transpose kept pending (folded into the next einsum, matmul or layer)
translates to `h = h`; a transpose folded into its producer re-emits that producer in the consumer, which leaves
the first computation dead (`y = tf.einsum(...)` followed by `y = view(tf.einsum(...), ...)`). Both are removed
here; the source comment of a removed line is kept on a line of its own above the next statement, with a note.
"""

import re
from collections import Counter

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.names import names_in
from porter.frontend.walk import walk

# Calls without side effects: a dead assignment of an expression made only of these (and names, attributes,
# constants, arithmetic) can go. Layers are never here: dropout draws random numbers, BatchNorm updates statistics.
PURE_CALLS = frozenset({"tf.einsum", "tf.matmul", "tf.transpose", "tf.reshape", "view", "reshape", "permute",
                        "transpose", "torch_size", "dim_size", "view_in_layout", "standardized_kernel"})


def clean_body(lines, mappings=()):
    """`lines` (one function body, indented) without identity assignments and dead pure assignments. The
    LineMappings in `mappings` that recorded a removed line are pointed at the note that replaces it."""
    cleaned = _clean(lines)
    if cleaned is not lines:
        notes = _notes_by_removed_line(lines, cleaned)
        for mapping in mappings:
            note = notes.get(mapping.generated.strip())
            if note is not None:
                mapping.generated = note
    return cleaned


def _notes_by_removed_line(before, after):
    """{stripped removed line: stripped note line} pairing each removed statement with the note left for it."""
    kept = {line.strip() for line in after}
    removed = [line.strip() for line in before if line.strip() and line.strip() not in kept]
    notes = [line.strip() for line in after if line.strip().startswith("# porter: ") and
             line.strip() not in {b.strip() for b in before}]
    return dict(zip(removed, notes, strict=False))


ASSIGNED_NAME = re.compile(r"^\s*([A-Za-z_]\w*) = (.*)$")
# the start of a value that may be a pure call: `tf.einsum(`, `(view(` (or only brackets: the call is on a later line)
PURE_START = re.compile(r"\(*\s*(?:(?:" + "|".join(r"\s*\.\s*".join(map(re.escape, name.split(".")))
                                                  for name in sorted(PURE_CALLS)) + r")\s*\(|[(\\]*\s*$)")


def _may_have_removable(lines):
    """Cheap test before parsing: a removable statement is `x = x`, or an assignment of a pure call to a name that a
    later statement assigns again, so a body with neither is left as it is (parsing each body to find none was a
    seventh of converting a 3,500-line file)."""
    pure_assigned = set()
    for line in lines:
        match = ASSIGNED_NAME.match(line)
        if match is None:
            continue
        name, value = match.groups()
        if name in pure_assigned or value.split("#")[0].strip(" ()") == name:
            return True
        if PURE_START.match(value) or value.startswith("lambda"):
            pure_assigned.add(name)
    # a pure value never read (a standardised kernel's rows, the kernel taken where it is used): no mention of the
    # name but as an attribute (`self.weight`), a keyword (`weight=`) or an assignment's target
    text = "\n".join(lines)
    return any(not re.search(rf"(?<![.\w]){re.escape(name)}\b(?!\s*=(?!=))", text) for name in pure_assigned)


def _clean(lines):
    if not lines or not _may_have_removable(lines):
        return lines
    indent = len(lines[0]) - len(lines[0].lstrip(" "))
    text = "def _cleaned():\n" + "\n".join(line[indent - 4:] if line.strip() else "" for line in lines) + "\n"
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return lines  # not a plain body (porter's own check reports real syntax problems later)
    cleaner = _BodyCleaner(_variable_counts(module))
    cleaned = module.visit(cleaner)
    if not cleaner.removed:
        return lines
    body = cleaned.code.splitlines()[1:]
    return [(" " * (indent - 4) + line) if line.strip() else line for line in body]


class _BodyCleaner(cst.CSTTransformer):
    def __init__(self, name_counts):
        super().__init__()
        self.removed = False
        self.name_counts = name_counts  # how often each name is written in the function (its target included)

    def leave_IndentedBlock(self, original, updated):
        statements = list(updated.body)
        kept, carried = [], []
        for index, statement in enumerate(statements):
            reason = _removable(statement, statements[index + 1:], self.name_counts)
            if reason is None:
                if carried:
                    statement = statement.with_changes(leading_lines=(*carried, *statement.leading_lines))
                    carried = []
                kept.append(statement)
                continue
            self.removed = True
            carried.extend(statement.leading_lines)
            comment = _trailing_comment(statement)
            note = f"# porter: {reason}" + (f"; source: {comment.lstrip('# ')}" if comment else "")
            carried.append(cst.EmptyLine(comment=cst.Comment(note)))
        if carried:  # the block ends with removed lines (or holds nothing else): their notes go on a `pass`
            kept.append(cst.SimpleStatementLine([cst.Pass()], leading_lines=carried))
        return updated.with_changes(body=kept)


def _removable(statement, rest, name_counts):
    """Why `statement` can go (a note), or None."""
    assign = _single_assign(statement)
    if assign is None:
        return None
    target, value = assign
    if isinstance(value, cst.Name) and value.value == target:
        return f"`{target}` kept as it is: its transpose is folded into the next op"
    if _is_pure(value) and _overwritten_before_read(target, rest):
        return f"`{target}` is computed by the next line, its layout folded in"
    if _is_pure(value) and name_counts[target] == 1:
        return f"`{target}` is not computed here: nothing in the port reads it (a kernel is taken where it lies)"
    if isinstance(value, cst.Lambda) and name_counts[target] == 1:
        return f"`{target}` is written out where it is called (`map`), for the layouts it is called on"
    return None


def _single_assign(statement):
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value, small.value
    return None


def _trailing_comment(statement):
    trailing = statement.trailing_whitespace
    return trailing.comment.value if trailing.comment is not None else None


def _is_pure(node):
    pure = [True]

    class Checker(cst.CSTVisitor):
        def visit_Call(self, call):
            if dotted_name(call.func) not in PURE_CALLS:
                pure[0] = False

        def visit_Lambda(self, node):
            pure[0] = False

    walk(node, Checker())
    return pure[0] and isinstance(node, cst.Call)


def _variable_counts(node):
    """How often each variable is written in `node` (bound or read; attribute names and keywords are not variables)."""
    counts = Counter()

    class Counter_(cst.CSTVisitor):
        def visit_Name(self, name):
            counts[name.value] += 1

        def visit_Attribute(self, attribute):
            walk(attribute.value, self)
            return False

        def visit_Arg(self, arg):
            walk(arg.value, self)
            return False

    walk(node, Counter_())
    return counts


def _overwritten_before_read(name, rest):
    """Whether the next statement at this level assigns `name` without reading it (straight-line code only)."""
    if not rest:
        return False
    following = _single_assign(rest[0])
    if following is None or following[0] != name:
        return False
    return name not in names_in(following[1])
