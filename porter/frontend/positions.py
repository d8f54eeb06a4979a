"""Line and column of every node of a parsed module but whitespace: libcst's PositionProvider figures, one pass.

Positions come from a code-generation pass over the module that counts lines and columns as it goes, as libcst's
`PositionProvider` does; after the parse itself this is the largest fixed cost of reading a file (0.76 s of CPU for
a 3,500-line file through `MetadataWrapper.resolve(PositionProvider)`, 0.25 s here). What cost the difference:
`resolve` ends with a pass for batchable providers even when none is asked for (a second walk of the whole module,
rebuilding every node, that finds nothing); the provider's codegen state keeps every token of the generated text
(which nobody reads), enters a generator-based context manager per node and builds frozen dataclasses; and half
the nodes are whitespace, whose positions nothing asks for. `node_positions` runs the provider's own codegen state
without those, and for the pass replaces libcst's per-node codegen wrapper, its generator-based parentheses and a
Name's codegen with plain functions (a third of the pass, 0.23 -> 0.15 s of CPU), and a SimpleWhitespace's and a
Newline's (nearly half the nodes) with a column or line count. The figures are libcst's
(tests/frontend/test_positions.py compares them), as named tuples with the same fields (`positions[node].start.line`).
"""

import contextlib
from typing import NamedTuple

import libcst as cst
from libcst._nodes.base import CSTNode
from libcst._nodes.expression import _BaseParenthesizedNode as _PARENTHESIZED
from libcst.metadata.position_provider import NEWLINE_RE, PositionProvidingCodegenState

# Nodes made only of whitespace: nothing asks where they are, and they are half of a file's nodes.
WHITESPACE = frozenset({cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.Newline})


class CodePosition(NamedTuple):
    """libcst's CodePosition (line from 1, column from 0) as a tuple: made ~5x faster than the frozen dataclass."""

    line: int
    column: int


class CodeRange(NamedTuple):
    """libcst's CodeRange (start inclusive, end exclusive) as a tuple."""

    start: CodePosition
    end: CodePosition


class _PositionCounter(PositionProvidingCodegenState):
    """The provider's codegen state, counting lines and columns without keeping the generated text (its first token
    excepted)."""

    def before_codegen(self, node):
        if type(node) not in WHITESPACE:
            self._stack.append(CodePosition(self.line, self.column))

    def after_codegen(self, node):
        if type(node) in WHITESPACE:
            return
        start = self._stack.pop()
        computed = self.provider._computed
        if node not in computed:  # a syntactic position recorded inside the node wins
            computed[node] = CodeRange(start, CodePosition(self.line, self.column))

    def add_indent_tokens(self):
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value):
        if not self.tokens:  # the module's codegen asks whether anything was written: the first token tells it
            self.tokens.append(value)
        if "\n" in value or "\r" in value:
            segments = NEWLINE_RE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _SyntacticPosition(self, node, start_node, end_node)


class _SyntacticPosition:
    """PositionProvidingCodegenState.record_syntactic_position as a plain context manager (no generator frame)."""

    __slots__ = ("end_node", "node", "start", "start_node", "state")

    def __init__(self, state, node, start_node, end_node):
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self):
        self.start = CodePosition(self.state.line, self.state.column)

    def __exit__(self, *exc):
        state, computed = self.state, self.state.provider._computed
        start = computed[self.start_node].start if self.start_node is not None else self.start
        end = computed[self.end_node].end if self.end_node is not None else CodePosition(state.line, state.column)
        computed[self.node] = CodeRange(start, end)


class _Positions:
    """What the codegen state needs of a provider: the table it fills."""

    def __init__(self):
        self._computed = {}


def node_positions(module):
    """{node: CodeRange} for every node of `module`, equal to `MetadataWrapper(module).resolve(PositionProvider)`."""
    positions = _Positions()
    with _fast_codegen():
        module._codegen(_PositionCounter(default_indent=module.default_indent,
                                         default_newline=module.default_newline, provider=positions))
    return positions._computed


@contextlib.contextmanager
def _fast_codegen():
    """libcst's codegen of every node and of parenthesised expressions, for this pass (porter parses on one thread:
    no other thread makes code from nodes meanwhile): a node's range without the state's stack and its two hooks,
    parentheses without a generator-based context manager per expression, a Name's range at once. Each records
    what the provider's state records (tests/frontend/test_positions.py)."""
    saved = CSTNode.__dict__["_codegen"], _PARENTHESIZED.__dict__["_parenthesize"], cst.Name.__dict__["_codegen_impl"]
    _ORIGINAL.update(zip(("codegen", "parenthesize", "name"), saved, strict=True))
    CSTNode._codegen, _PARENTHESIZED._parenthesize, cst.Name._codegen_impl = _codegen, _parenthesize, _name_codegen
    cst.SimpleWhitespace._codegen, cst.Newline._codegen = _space_codegen, _newline_codegen  # CSTNode's otherwise
    try:
        yield
    finally:
        CSTNode._codegen, _PARENTHESIZED._parenthesize, cst.Name._codegen_impl = saved
        del cst.SimpleWhitespace._codegen, cst.Newline._codegen


_ORIGINAL = {}  # libcst's own functions, for a codegen state other than the position counter's


def _codegen(node, state, **kwargs):
    """`CSTNode._codegen` with `_PositionCounter`'s before/after hooks inlined."""
    if type(state) is not _PositionCounter:
        _ORIGINAL["codegen"](node, state, **kwargs)
        return
    if type(node) in WHITESPACE:
        node._codegen_impl(state, **kwargs)
        return
    start = CodePosition(state.line, state.column)
    node._codegen_impl(state, **kwargs)
    computed = state.provider._computed
    if node not in computed:  # a syntactic position recorded inside the node wins
        computed[node] = CodeRange(start, CodePosition(state.line, state.column))


def _space_codegen(node, state, **kwargs):
    """A SimpleWhitespace's codegen (nothing records where whitespace is): its width added to the column, unless it
    holds a line continuation (a backslash and a line end). Nearly half of a file's nodes are SimpleWhitespace."""
    if type(state) is _PositionCounter and state.tokens:
        value = node.value
        if "\n" not in value and "\r" not in value:
            state.column += len(value)
            return
    _codegen(node, state, **kwargs)


def _newline_codegen(node, state, **kwargs):
    """A Newline's codegen: one line end (`\n`, `\r\n` or `\r`, the module's default where it has no value)."""
    if type(state) is _PositionCounter and state.tokens:
        state.line += 1
        state.column = 0
        return
    _codegen(node, state, **kwargs)


def _parenthesize(node, state):
    if type(state) is not _PositionCounter:
        return _ORIGINAL["parenthesize"](node, state)
    return _Parenthesized(node, state)


class _Parenthesized:
    """`_BaseParenthesizedNode._parenthesize` as a plain context manager: the left parentheses, the node's syntactic
    position around its code, the right parentheses."""

    __slots__ = ("node", "start", "state")

    def __init__(self, node, state):
        self.node, self.state = node, state

    def __enter__(self):
        state = self.state
        for lpar in self.node.lpar:
            lpar._codegen(state)
        self.start = CodePosition(state.line, state.column)

    def __exit__(self, kind, *exc):
        if kind is not None:
            return
        state = self.state
        state.provider._computed[self.node] = CodeRange(self.start, CodePosition(state.line, state.column))
        for rpar in self.node.rpar:
            rpar._codegen(state)


def _name_codegen(node, state):
    """`Name._codegen_impl`: a name is one token, on one line."""
    if type(state) is not _PositionCounter or node.lpar or node.rpar or not state.tokens:
        _ORIGINAL["name"](node, state)
        return
    start = CodePosition(state.line, state.column)
    state.column += len(node.value)
    state.provider._computed[node] = CodeRange(start, CodePosition(state.line, state.column))
