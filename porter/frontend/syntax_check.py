"""Read a model source file and check that it is Python CPython accepts, before libcst parses it.

The check (`check_syntax`: CPython's compile of the text, its syntax tree's depth) is a tenth of converting a
3,500-line file and needs nothing but the text. The command line starts it in a forked child (`start_early_check`,
porter.forked) before it imports the converter, so that on a machine with a second core the check runs while this
process imports libcst and the passes; `parse_source` then takes the child's verdict (`checked_syntax`) where it is
about the same text, and checks the text itself otherwise. The verdict is the same either way: the child runs the
same `check_syntax` and sends back the same error (message, line, column, hint), raised where the check always
raised it (after the file was read, before libcst parses it: libcst's native parser crashes on absurd nesting the
check refuses). Once the child passed the text, a thread parses it with libcst (whose native parser lets go of the
interpreter for much of the parse), beside the imports; `unchecked_parse.parsed_module` takes that module, or the
error its parse raised, for the same text, once. This module imports no libcst, so the fork happens
in a small process (libcst is imported after the fork).
"""

import ast
import io
import tokenize
from pathlib import Path

from porter.errors import SourceError

MAX_SOURCE_BYTES = 32 * 2**20  # a 10,000-line model file is about 0.4 MiB


def read_text(path, display_path):
    """Decode a source file honouring PEP 263 coding cookies; clean errors for binary or undecodable files."""
    path = Path(path)
    if path.exists() and not path.is_dir() and not path.is_file():  # a FIFO or device would block or never end
        raise SourceError("not a regular file", display_path)
    try:
        size = path.stat().st_size if path.is_file() else 0
    except OSError:
        size = 0  # reading below reports the problem
    if size > MAX_SOURCE_BYTES:
        raise SourceError(f"{size / 2**20:.0f} MiB is too large for a model source (porter reads up to "
                          f"{MAX_SOURCE_BYTES // 2**20} MiB)", display_path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SourceError("no such file", display_path, hint="check the path") from None
    except IsADirectoryError:
        raise SourceError("is a directory, not a Python file", display_path) from None
    except PermissionError:
        raise SourceError("cannot read the file (permission denied)", display_path) from None
    except OSError as error:
        raise SourceError(f"cannot read the file ({error.strerror})", display_path) from None
    if b"\x00" in raw:
        raise SourceError("binary file, not Python source", display_path)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        text = raw.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError) as error:
        raise SourceError(f"cannot decode the file as Python source ({error})", display_path,
                          hint="save it as UTF-8 or declare its encoding (PEP 263)") from None
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise SourceError("empty file", display_path)
    return text


MAX_NESTING = 100  # syntax-tree depth porter reads; real model files stay under ~20 (the fixtures: 10 to 14)


def check_syntax(text, display_path):
    """Report syntax errors at CPython's location (libcst's own positions differ); refuse absurd nesting."""
    try:
        tree = compile(text, str(display_path), "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        # Compiling the tree as well finds what the symbol table rejects: `return` outside a function,
        # duplicate parameters, `nonlocal` at module level. Compiling runs nothing.
        compile(tree, str(display_path), "exec", dont_inherit=True)
    except SyntaxError as error:
        raise SourceError(f"syntax error: {error.msg}", display_path, error.lineno, error.offset) from None
    except (ValueError, RecursionError, MemoryError) as error:
        raise SourceError(f"cannot parse the file ({error or type(error).__name__})", display_path) from None
    depth, line = deepest_line(tree)
    if depth > MAX_NESTING:
        raise SourceError(f"code nested {depth} levels deep; porter reads up to {MAX_NESTING}", display_path, line,
                          hint="split the expression into several statements")


def deepest_line(tree):
    """(depth, line) of the most deeply nested syntax-tree node, found without recursion."""
    best, best_line = 0, None
    stack = [(tree, 1, None)]
    pop, push, node_class = stack.pop, stack.append, ast.AST
    while stack:
        node, depth, line = pop()
        line = getattr(node, "lineno", line)
        if depth > best:
            best, best_line = depth, line
        depth += 1
        for name in node._fields:  # ast.iter_child_nodes, without its generators (half this walk's time)
            value = getattr(node, name, None)
            if isinstance(value, node_class):
                push((value, depth, line))
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, node_class):
                        push((item, depth, line))
    return best, best_line


_EARLY = {}  # display path -> _EarlyRead: checks started by `start_early_check`


def start_early_check(path, display_path):
    """Start `check_syntax` of the file `path` in a forked child, and libcst's parse of the file once the check passed
    it (nothing where fork is not the platform's way)."""
    from porter.forked import Forked, can_fork

    if not can_fork():
        return
    abandon_early_checks()
    child = Forked(lambda: _verdict(path, display_path))  # forked first: a small process to copy
    from porter.frontend import unchecked_parse  # libcst, imported here: the thread imports nothing

    early = _EARLY[display_path] = _EarlyRead(path, display_path, child, unchecked_parse.parsed_module)
    unchecked_parse.expect_early_parse(early)


def abandon_early_checks():
    """Stop the checks and parses nobody took (the command failed before parsing its source, or is done)."""
    while _EARLY:
        _, early = _EARLY.popitem()
        early.abandon()


def checked_syntax(text, display_path, path):
    """`check_syntax(text, display_path)`, answered by the early check of the same file where one ran on the same
    text (its error raised as it was found there), done here otherwise."""
    early = _EARLY.get(display_path)
    verdict = None
    if early is not None and early.path == str(path):
        verdict = early.verdict_taken()
    elif early is not None:
        _EARLY.pop(display_path).abandon()
    if verdict is None or verdict[0] != _fingerprint(text):
        check_syntax(text, display_path)
        return
    if verdict[1] is not None:
        message, line, column, hint = verdict[1]
        raise SourceError(message, display_path, line, column, hint=hint)


class _EarlyRead:
    """The early check (a forked child), and a thread that waits for its verdict and, where the text passed, parses
    it with libcst. libcst's native parser lets go of the interpreter while it parses, so the parse runs beside the
    command line's imports; the check comes first because the parser crashes on nesting the check refuses."""

    def __init__(self, path, display_path, child, parse):
        import threading

        self.path, self.display_path, self.child, self._parse = str(path), display_path, child, parse
        self.verdict, self.parse, self.abandoned = None, None, False
        self.checked = threading.Event()
        self.thread = threading.Thread(target=self._run, name="porter-early-parse", daemon=True)
        self.thread.start()

    def _run(self):
        try:
            self.verdict = self.child.result()
        finally:
            self.checked.set()
        if self.abandoned or self.verdict is None or self.verdict[1] is not None:
            return
        try:
            text = read_text(self.path, self.display_path)
        except SourceError:
            return
        if _fingerprint(text) != self.verdict[0]:
            return
        try:
            self.parse = (text, self._parse(text, early=False), None)
        except Exception as error:  # noqa: BLE001 - raised where the parse is taken, as the parse there would
            self.parse = (text, None, error)

    def verdict_taken(self):
        """The child's verdict (waiting for it): (fingerprint, None or the error's fields), or None."""
        self.checked.wait()
        return self.verdict

    def parsed(self):
        """(text, module, error) of the early parse (waiting for it), or None."""
        self.thread.join()
        found, self.parse = self.parse, None
        return found

    def abandon(self):
        """No parse wanted (any more): the thread ends, its module (if any) is dropped."""
        from porter.frontend.unchecked_parse import forget_early_parse

        self.abandoned = True
        self.thread.join()
        self.parse = None
        forget_early_parse(self)


def _verdict(path, display_path):
    """(fingerprint of the text read, None or the check's error as (message, line, column, hint)) in the child;
    None where the file cannot be read (the parent reads it again and reports that)."""
    try:
        text = read_text(path, display_path)
    except SourceError:
        return None
    try:
        check_syntax(text, display_path)
    except SourceError as error:
        if error.path != display_path:
            return None
        return _fingerprint(text), (error.message, error.line, error.column, error.hint)
    return _fingerprint(text), None


def _fingerprint(text):
    """Which text a verdict is about: its length and hash (a fork keeps the parent's string hash seed)."""
    return len(text), hash(text)
