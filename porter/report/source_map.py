"""Side-by-side walks: each source method next to the generated method it became, row by row.

Rows come from the IR's LineMappings (one per translated source statement). Each mapping's generated text is
located in the formatted module by comparing token streams (formatting changes spacing, quotes, trailing commas
and sometimes parentheses, never tokens otherwise), which gives its generated line numbers; the source and
generated lines between two located statements (def lines, if/for headers, comments) become context rows, so a
walk covers the whole method on both sides.
"""

import ast
import bisect
import io
import re
import sys
import textwrap
import tokenize
from dataclasses import dataclass, field

_SKIPPED_TOKENS = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER,
                   tokenize.COMMENT}
_CLOSERS = {")", "]", "}"}
_TOP_LEVEL_CLASS = re.compile(r"class (\w+)\b")
_CLOSING_LINE = re.compile(r"^\s*[)\]}]+[,:]?\s*$")
_SUPER_INIT = re.compile(r"^\s*(super\(.*\)|[\w.]+)\.__init__\(")


@dataclass
class Row:
    """One row of a walk: source lines and the generated lines they became, with notes about what changed."""

    source: list  # [(line number, text)], dedented to the method
    generated: list  # [(line number or None, text)], dedented to the method
    kind: str = "statement"  # "statement" (a translated statement) or "context" (def line, headers, comments)
    notes: list = field(default_factory=list)  # Note objects placed on this row
    anchor: str = ""  # "<class>-L<first source line>"
    line_anchors: list = field(default_factory=list)  # "<class>-L<n>" for later lines a note or stub links to

    @property
    def source_start(self):
        return self.source[0][0] if self.source else None

    @property
    def source_end(self):
        return self.source[-1][0] if self.source else None

    @property
    def generated_start(self):
        numbers = [n for n, _ in self.generated if n is not None]
        return numbers[0] if numbers else None

    def covers(self, line):
        return bool(self.source) and self.source_start <= line <= self.source_end

    def anchor_for(self, line, taken):
        """The anchor a link to source `line` should name: "<class>-L<line>" on this row (a statement over several
        lines gets an anchor for the line a note is about, so "line 13" never links to L12), unless that id is
        `taken` elsewhere; then the row's own anchor."""
        if not self.anchor or not self.covers(line) or line == self.source_start:
            return self.anchor
        anchor = f"{self.anchor.rsplit('-L', 1)[0]}-L{line}"
        if anchor in self.line_anchors:
            return anchor
        if anchor in taken:
            return self.anchor
        taken.add(anchor)
        self.line_anchors.append(anchor)
        return anchor


@dataclass
class Walk:
    """One source method (`forward`, `__init__`, a helper) beside its generated counterpart (`call`, ...)."""

    class_name: str
    source_name: str
    generated_name: str
    rows: list
    anchor: str
    source_line: int
    generated_line: int | None


class GeneratedText:
    """The formatted generated code, tokenized once, with helpers to find classes, methods and statements."""

    def __init__(self, text, numbered=True):
        self.text = text
        self.lines = text.splitlines()
        self.numbered = numbered  # False: line numbers are internal only (not the real module's)
        self.tokens = _tokens(text, keep_parens=True) or []
        self.loose_tokens = [t for t in self.tokens if t[0] not in ("(", ")")]
        self.class_lines = {}  # top-level class name -> 0-based line of its first definition
        for index, line in enumerate(self.lines):
            match = _TOP_LEVEL_CLASS.match(line)
            if match:
                self.class_lines.setdefault(match.group(1), index)

    def class_range(self, name):
        """(first, last) 1-based lines of top-level `class name`, or None."""
        index = self.class_lines.get(name)
        if index is None:
            return None
        end = index + 1
        for later in range(index + 1, len(self.lines)):
            text = self.lines[later]
            if text.strip() and not text[0].isspace() and not text.startswith(("#", ")")):
                break
            end = later + 1
        return index + 1, _trim_blank_end(self.lines, index + 1, end)

    def method_range(self, class_range, name):
        """(def line, last line) of method `name` inside the class lines, decorators excluded, or None."""
        if class_range is None:
            return None
        first, last = class_range
        pattern = re.compile(rf"( +)def {re.escape(name)}\(")
        for number in range(first, last + 1):
            match = pattern.match(self.lines[number - 1])
            if match:
                indent = len(match.group(1))
                end = _header_end(self.lines, number)
                for later in range(end + 1, last + 1):
                    text = self.lines[later - 1]
                    if text.strip() and len(text) - len(text.lstrip()) <= indent:
                        break
                    end = later
                return number, _trim_blank_end(self.lines, number, end)
        return None

    def locate(self, snippet, start, end):
        """(first, last) line of `snippet` (a statement) inside lines [start, end], searching from `start`."""
        wanted = _tokens(textwrap.dedent(snippet), keep_parens=True)
        if wanted is None:
            return None
        if not wanted:
            return self._locate_comment(snippet, start, end)
        for tokens, pattern in ((self.tokens, wanted), (self.loose_tokens,
                                                        [t for t in wanted if t[0] not in ("(", ")")])):
            found = _find(tokens, [t[0] for t in pattern], start, end)
            if found is not None:
                first, last = found
                while last < end and _CLOSING_LINE.match(self.lines[last]):  # brackets the formatter added
                    last += 1
                return first, last
        if _SUPER_INIT.search(snippet):  # rewritten to pass **kwargs through after the mapping was recorded
            for number in range(start, end + 1):
                if _SUPER_INIT.search(self.lines[number - 1]):
                    return number, number
        return None

    def _locate_comment(self, snippet, start, end):
        comment = snippet.strip().splitlines()[0].strip() if snippet.strip() else ""
        if not comment:
            return None
        for number in range(start, end + 1):
            if self.lines[number - 1].strip() == comment:
                return number, number
        return None


def _trim_blank_end(lines, first, end):
    while end > first and not lines[end - 1].strip():
        end -= 1
    return end


def _tokens(text, keep_parens=True):
    """[(normalized token, line)] without layout, comments or trailing commas; None if `text` does not tokenize."""
    found = []
    try:
        for kind, value, line in _raw_tokens(text):
            if kind in _SKIPPED_TOKENS:
                continue
            if kind == tokenize.STRING:
                try:
                    value = ast.literal_eval(value)
                    # whitespace inside strings may be re-indented (docstrings); compare it collapsed
                    value = repr(" ".join(value.split()) if isinstance(value, str) else value)
                except (ValueError, SyntaxError):
                    value = value.replace("'", '"')
            elif "'" in value:
                value = value.replace("'", '"')  # f-string pieces
            found.append((value, line))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    tokens = [t for i, t in enumerate(found)
              if not (t[0] == "," and i + 1 < len(found) and found[i + 1][0] in _CLOSERS)]
    if not keep_parens:
        tokens = [t for t in tokens if t[0] not in ("(", ")")]
    return tokens


def _raw_tokens(text):
    """(type, string, line) of `text`'s tokens as `tokenize.generate_tokens` gives them (layout tokens aside, which
    `_tokens` skips). On Python 3.11 from CPython's own tokenizer where it reads the whole text cleanly: the
    pure-Python `tokenize` of 3.11 was most of placing a 3,500-line file's statements in the report (0.2 s of CPU;
    3.12 made it the C tokenizer)."""
    if _C_TOKENIZER is not None:
        tokens = _c_tokens(text)
        if tokens is not None:
            return tokens
    return [(token.type, token.string, token.start[0]) for token in tokenize.generate_tokens(io.StringIO(text).readline)]


def _c_tokens(text):
    """The C tokenizer's tokens of `text`, or None where `tokenize` might read it otherwise: the C tokenizer stops
    quietly where `tokenize` raises (a bracket left open, a dedent to no outer level) or types a stray character as
    an operator where `tokenize` gives error tokens; so only a text it reads to its end, every token a known one,
    is taken from it."""
    try:
        read = list(_C_TOKENIZER(text))  # (string, type, line, end line, column, end column, line text)
    except (SyntaxError, ValueError):
        return None
    if not read or read[-1][1] not in (tokenize.NEWLINE, tokenize.DEDENT):
        return None  # stopped inside a statement: tokenize raises there
    if not _UNCERTAIN_TYPES.isdisjoint([token[1] for token in read]):
        return None
    rest = text.splitlines()[read[-1][3]:]
    if any(line.strip() and not line.lstrip().startswith("#") for line in rest):
        return None  # stopped before the end: a dedent tokenize rejects
    operator, exact = tokenize.OP, _EXACT_OPERATOR_TYPES
    # seven fields named, not `*_`: a starred target builds a list per token (a tenth of the report's model)
    return [(operator if kind in exact else kind, value, line) for value, kind, line, _, _, _, _ in read]


try:  # Python 3.11: tokenize is pure Python; 3.12's is the C tokenizer already, with another interface
    from _tokenize import TokenizerIter as _C_TOKENIZER

    if sys.version_info[:2] != (3, 11):
        _C_TOKENIZER = None
except ImportError:
    _C_TOKENIZER = None
_EXACT_OPERATOR_TYPES = frozenset(tokenize.EXACT_TOKEN_TYPES.values())
_UNCERTAIN_TYPES = frozenset({tokenize.OP, tokenize.ERRORTOKEN})  # the C tokenizer's type of a character it does
# not know: tokenize gives error tokens there


def _find(tokens, wanted, start, end):
    if not wanted:
        return None
    size = len(wanted)
    first_value = wanted[0]
    begin = bisect.bisect_left(tokens, start, key=lambda token: token[1])  # tokens are in line order
    for index in range(begin, len(tokens)):
        value, line = tokens[index]
        if line > end:
            break
        if value == first_value and [t[0] for t in tokens[index:index + size]] == wanted:
            last_line = tokens[index + size - 1][1]
            if last_line <= end:
                return line, last_line
    return None


# --------------------------------------------------------------------------------------------------------- walks


def build_walks(source, ctx, generated):
    """{class name: [Walk]} for every class of the source, in source order of its methods."""
    walks = {}
    for name, info in source.classes.items():
        ir = ctx.irs.get(name)
        if ir is None:
            continue
        class_range = generated.class_range(name)
        methods = _source_methods(source, info)
        mappings = _dedupe(ir.mappings)
        walks[name] = []
        for method_name, definition in methods:
            position = source.positions.get(definition)
            if position is None:
                continue
            first, last = position.start.line, position.end.line
            inside = [m for m in mappings if first <= m.source_start <= last]
            generated_name = "call" if method_name == "forward" else method_name
            method_range = generated.method_range(class_range, generated_name)
            if not inside and method_range is None:
                continue
            rows = _walk_rows(source, definition, first, last, inside, generated, method_range)
            anchor = f"{name}-{method_name.strip('_') or method_name}"
            for row in rows:
                if row.source:
                    row.anchor = f"{name}-L{row.source_start}"
            walks[name].append(Walk(name, method_name, generated_name, rows, anchor, first,
                                    method_range[0] if method_range and generated.numbered else None))
        _unique_anchors(walks[name])
    return walks


def _source_methods(source, info):
    """(name, FunctionDef) of the methods a class's walks show: its own, plus an inherited forward."""
    methods = list(info.methods.items())
    if "forward" not in info.methods:
        inherited = info.find_method("forward")
        if inherited is not None:
            methods.append(("forward", inherited))
    order = {"__init__": 0, "forward": 1}
    return sorted(methods, key=lambda item: (order.get(item[0], 2), source.line_of(item[1]) or 0))


def _dedupe(mappings):
    """One mapping per source span: the last recorded (the translation that was emitted)."""
    latest = {}
    for mapping in mappings:
        latest[(mapping.source_start, mapping.source_end)] = mapping
    return sorted(latest.values(), key=lambda m: (m.source_start, m.source_end))


def _walk_rows(source, definition, first, last, mappings, generated, method_range):
    source_lines = source.lines
    body_start = _body_start(source, definition, first)
    source_indent = _indent(source_lines[first - 1])
    gen_indent = _indent(generated.lines[method_range[0] - 1]) if method_range else 0

    def source_slice(a, b):
        return [(n, _strip_indent(source_lines[n - 1], source_indent)) for n in range(a, b + 1)
                if 0 < n <= len(source_lines)]

    def generated_slice(a, b):
        return [(n if generated.numbered else None, _strip_indent(generated.lines[n - 1], gen_indent))
                for n in range(a, b + 1)]

    rows = []
    gen_cursor = method_range[0] if method_range else None  # next generated line not yet shown
    gen_end = method_range[1] if method_range else None
    src_cursor = first
    header_gen = None
    if method_range is not None:
        header_gen = _header_end(generated.lines, method_range[0])
    rows.append(Row(source_slice(first, body_start - 1),
                    generated_slice(method_range[0], header_gen) if method_range else [], "context"))
    src_cursor = body_start
    if header_gen is not None:
        gen_cursor = header_gen + 1
    for mapping in mappings:
        if mapping.source_start < src_cursor:
            continue
        found = None
        if method_range is not None:
            found = generated.locate(mapping.generated, gen_cursor, gen_end)
        gap_source = _nonblank(source_slice(src_cursor, mapping.source_start - 1))
        if found is not None:
            gap_generated = _nonblank(generated_slice(gen_cursor, found[0] - 1))
            if gap_source or gap_generated:
                rows.append(Row(gap_source, gap_generated, "context"))
            rows.append(Row(source_slice(mapping.source_start, mapping.source_end),
                            generated_slice(found[0], found[1]), "statement"))
            gen_cursor = found[1] + 1
        else:
            if gap_source:
                rows.append(Row(gap_source, [], "context"))
            text = textwrap.dedent(mapping.generated)
            rows.append(Row(source_slice(mapping.source_start, mapping.source_end),
                            [(None, line) for line in text.splitlines()], "statement"))
        src_cursor = mapping.source_end + 1
    tail_source = _nonblank(source_slice(src_cursor, last))
    tail_generated = _nonblank(generated_slice(gen_cursor, gen_end)) if method_range is not None else []
    if tail_source or tail_generated:
        rows.append(Row(tail_source, tail_generated, "context"))
    return [row for row in rows if row.source or row.generated]


def _body_start(source, definition, first):
    body = definition.body
    statements = getattr(body, "body", ())
    if statements:
        position = source.positions.get(statements[0])
        if position is not None:
            start = position.start.line
            leading = getattr(statements[0], "leading_lines", ())
            return max(first + 1, start - len(leading))
    return first + 1


def _header_end(lines, def_line):
    """Last line of a (possibly wrapped) `def ...:` header."""
    depth = 0
    for number in range(def_line, len(lines) + 1):
        text = lines[number - 1].split("#")[0]
        depth += text.count("(") + text.count("[") - text.count(")") - text.count("]")
        if depth <= 0 and text.rstrip().endswith(":"):
            return number
    return def_line


def _indent(line):
    return len(line) - len(line.lstrip(" "))


def _strip_indent(line, indent):
    return line[indent:] if line[:indent].strip() == "" else line.lstrip()


def _nonblank(numbered):
    return [(n, text) for n, text in numbered if text.strip()]


def _unique_anchors(walks):
    seen = set()
    for walk in walks:
        for row in walk.rows:
            if not row.anchor:
                continue
            anchor, suffix = row.anchor, 2
            while anchor in seen:
                anchor = f"{row.anchor}-{suffix}"
                suffix += 1
            row.anchor = anchor
            seen.add(anchor)
