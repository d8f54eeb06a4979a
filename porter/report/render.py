"""Jinja environments and filters for the reports (Markdown: HTML-in-table cells; HTML: autoescaped)."""

import functools
import re

from markupsafe import Markup, escape

from porter.codegen.templates import environment

_BACKTICKS = re.compile(r"`([^`]+)`")
_BACKTICK_RUNS = re.compile(r"`+")


def _base(autoescape):
    env = environment(autoescape)
    env.filters["line_range"] = line_range
    env.filters["layout_words"] = layout_words
    env.filters["shape"] = shape_text
    return env


@functools.lru_cache(maxsize=1)
def markdown_environment():
    env = _base(False)
    env.filters["cell"] = markdown_code_cell
    env.filters["md_table_text"] = markdown_table_text
    return env


@functools.lru_cache(maxsize=1)
def html_environment():
    env = _base(True)
    env.filters["inline"] = html_inline
    env.filters["code_lines"] = html_code_lines
    return env


def markdown_code_cell(lines):
    """Numbered lines [(n, text)] -> a Markdown table cell: one code span per line, joined by <br>.

    Code spans keep `__init__` and `**kwargs` literal; leading indentation becomes no-break spaces (a code span
    would strip it), pipes are escaped for the table.
    """
    if not lines:
        return ""
    return "<br>".join(_code_span(text) for _, text in lines)


def _code_span(text):
    stripped = text.lstrip(" ")
    body = ("\u00a0" * (len(text) - len(stripped)) + stripped.rstrip()).replace("|", "\\|") or "\u00a0"
    longest = max((len(run) for run in _BACKTICK_RUNS.findall(body)), default=0) if "`" in body else 0
    fence = "`" * (longest + 1)
    if longest or body.startswith(" ") or body.endswith(" "):
        return f"{fence} {body} {fence}"
    return f"{fence}{body}{fence}"


def markdown_table_text(text):
    """Inline Markdown text for a table cell: pipes escaped, newlines flattened."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def html_inline(text):
    """Escape `text`, then `code` spans -> <code>."""
    return Markup(_BACKTICKS.sub(lambda m: f"<code>{m.group(1)}</code>", str(escape(text))))


def html_code_lines(lines):
    """Numbered lines -> escaped text joined with newlines (shown in <pre>)."""
    texts = [text for _, text in lines]
    if all(type(text) is str for text in texts):  # escaping is per character: the joined text at once is the same
        return Markup(str(escape("\n".join(texts))))
    return Markup("\n".join(str(escape(text)) for text in texts))


def line_range(lines):
    """'12' or '12–14' for numbered lines [(n, text)]; '' when unnumbered."""
    numbers = [n for n, _ in lines if n is not None]
    if not numbers:
        return ""
    return str(numbers[0]) if numbers[0] == numbers[-1] else f"{numbers[0]}–{numbers[-1]}"


def layout_words(layout):
    return {"source": "torch's order (channels-first)", "channels_last": "channels-last",
            "python": "a Python value"}.get(layout, layout)


def shape_text(example):
    """A manifest example input -> '(1, 28, 28) float32' (batch excluded), with its value range when given."""
    shape = "(" + ", ".join(str(s) for s in example.get("shape", [])) + ("," if len(example.get("shape", [])) == 1
                                                                        else "") + ")"
    text = f"{shape} {example.get('dtype', 'float32')}"
    if example.get("low") is not None or example.get("high") is not None:
        text += f" in [{example.get('low')}, {example.get('high')})"
    return text
