"""libcst's parse of a module without re-validating every node the parser builds.

Every libcst node checks itself when it is made (`CSTNode.__post_init__` calls `_validate`: balanced parentheses,
whitespace between keywords, ...). That guards trees put together by hand; a tree the parser built holds by
construction (the model file is compiled by CPython first, too: frontend/source.py's check_syntax), and the checks
were ~40% of parsing a 3,500-line file (0.19 s of 0.45 s of CPU; libcst's own comment on `__post_init__` suggests
skipping them for parsed files). `parsed_module` turns them off for the parse alone: nodes made afterwards (porter's
rewrites, `with_changes`) are checked as always. A text that is not Python still fails: the parser, not the checks,
reports syntax errors (`libcst.ParserSyntaxError`).
"""

import contextlib

import libcst as cst
from libcst._nodes.base import CSTNode


def parsed_module(text, early=True):
    """`libcst.parse_module(text)` without the per-node checks (same tree; only the parser's own errors); the
    command line's early parse of the same text where it made one (frontend/syntax_check.py), taken once."""
    if early:
        module = _early_parse(text)
        if module is not None:
            return module
    with _nodes_unchecked():
        return cst.parse_module(text)


_EARLY = []  # parses started before they were asked for: objects whose `parsed()` is (text, module, error) or None


def expect_early_parse(pending):
    """`parsed_module` takes `pending`'s module for the text it parsed (frontend/syntax_check.py starts it)."""
    _EARLY.append(pending)


def forget_early_parse(pending):
    if pending in _EARLY:
        _EARLY.remove(pending)


def _early_parse(text):
    """The module of `text` parsed early (or the error its parse raised, raised here), taken once; None where no
    early parse was of this text. Waits for an early parse still running: no parse runs beside another (the node
    checks are switched off for the whole process while one runs)."""
    for pending in list(_EARLY):
        parsed = pending.parsed()
        if parsed is not None and parsed[0] == text:
            _EARLY.remove(pending)
            if parsed[2] is not None:
                raise parsed[2]
            return parsed[1]
    return None


@contextlib.contextmanager
def _nodes_unchecked():
    """Nodes made in the block skip `_validate`. One parse at a time: the command line's early parse runs on a thread
    of its own while the main thread imports porter (which makes no nodes), and a parse on the main thread waits for
    it first (`_early_parse`)."""
    check = CSTNode.__dict__["__post_init__"]
    CSTNode.__post_init__ = _unchecked
    try:
        yield
    finally:
        CSTNode.__post_init__ = check


def _unchecked(node):
    """`CSTNode.__post_init__` for parsed nodes: nothing to check."""
