"""The syntax check started early in a forked child (frontend/syntax_check.py) gives the verdict the check gives
in-process: the same error (message, line, column, hint), or none; a text it did not see is checked again."""

import builtins

import pytest

from porter.errors import SourceError
from porter.forked import can_fork
from porter.frontend import syntax_check
from porter.frontend.syntax_check import abandon_early_checks, check_syntax, checked_syntax, start_early_check

pytestmark = pytest.mark.skipif(not can_fork(), reason="the early check is a forked child (Linux)")

TEXTS = {
    "fine": "import torch\n\n\nclass Net(torch.nn.Module):\n    pass\n",
    "unclosed": "import torch\nx = (1\n",
    "symbol_table": "import torch\nreturn 1\n",
    "too_deep": "x = " + "-" * 150 + "1\n",
    "indentation": "def f():\nreturn 1\n",
}


def verdict_in_process(text, display):
    try:
        check_syntax(text, display)
    except SourceError as error:
        return str(error), error.line, error.column, error.hint
    return None


def verdict_early(path, display, text):
    start_early_check(path, display)
    try:
        checked_syntax(text, display, path)
    except SourceError as error:
        return str(error), error.line, error.column, error.hint
    return None


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_the_early_verdict_is_the_in_process_one(tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(TEXTS[name])
    assert verdict_early(path, str(path), TEXTS[name]) == verdict_in_process(TEXTS[name], str(path))


def test_the_parent_does_not_compile_what_the_child_checked(tmp_path, monkeypatch):
    path = tmp_path / "net.py"
    path.write_text(TEXTS["fine"])
    start_early_check(path, str(path))
    compiled = []
    original = builtins.compile
    monkeypatch.setattr(builtins, "compile", lambda *args, **kwargs: compiled.append(1) or original(*args, **kwargs))
    checked_syntax(TEXTS["fine"], str(path), path)
    assert compiled == []


def test_a_text_the_child_did_not_read_is_checked_here(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(TEXTS["fine"])
    start_early_check(path, str(path))
    with pytest.raises(SourceError, match="was never closed"):  # the file changed after the child read it
        checked_syntax(TEXTS["unclosed"], str(path), path)


def test_another_file_is_checked_here(tmp_path):
    path, other = tmp_path / "net.py", tmp_path / "other.py"
    path.write_text(TEXTS["fine"])
    start_early_check(path, str(path))
    with pytest.raises(SourceError, match="was never closed"):
        checked_syntax(TEXTS["unclosed"], str(path), other)
    assert syntax_check._EARLY == {}


def test_an_unread_file_leaves_the_check_to_the_parent(tmp_path):
    path = tmp_path / "missing.py"
    start_early_check(path, str(path))
    checked_syntax(TEXTS["fine"], str(path), path)  # no verdict from the child: checked here, and it is fine


def test_an_untaken_check_is_abandoned(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(TEXTS["fine"])
    start_early_check(path, str(path))
    early = syntax_check._EARLY[str(path)]
    abandon_early_checks()
    assert syntax_check._EARLY == {} and early.child.pid is None and not early.thread.is_alive()


def test_the_command_line_reports_a_syntax_error_as_before(tmp_path, capsys):
    from porter.cli import main

    path = tmp_path / "bad.py"
    path.write_text(TEXTS["unclosed"])
    assert main(["convert", str(path), "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"porter: error: {path}:2:5: syntax error: '(' was never closed\n"
    assert syntax_check._EARLY == {}


def test_the_early_parse_is_the_module_parse_source_reads(tmp_path, monkeypatch):
    """Once the check passed the file, a thread parses it: `parsed_module` of the same text takes that module (no
    parse of its own), once; the module is libcst's."""
    import libcst as cst

    from porter.frontend import unchecked_parse
    from porter.frontend.unchecked_parse import parsed_module

    path = tmp_path / "net.py"
    path.write_text(TEXTS["fine"])
    start_early_check(path, str(path))
    checked_syntax(TEXTS["fine"], str(path), path)
    syntax_check._EARLY[str(path)].thread.join()  # the thread's own parse done before parses are counted
    parses = []
    original = cst.parse_module
    monkeypatch.setattr(cst, "parse_module", lambda text, *args: parses.append(text) or original(text, *args))
    module = parsed_module(TEXTS["fine"])
    assert parses == [] and module.code == TEXTS["fine"] and module.deep_equals(original(TEXTS["fine"]))
    assert unchecked_parse._EARLY == []
    assert parsed_module(TEXTS["fine"]) is not module and parses == [TEXTS["fine"]]  # taken once


def test_the_early_parse_of_another_text_is_not_taken(tmp_path):
    from porter.frontend import unchecked_parse
    from porter.frontend.unchecked_parse import parsed_module

    path = tmp_path / "net.py"
    path.write_text(TEXTS["fine"])
    start_early_check(path, str(path))
    checked_syntax(TEXTS["fine"], str(path), path)
    other = TEXTS["fine"] + "x = 1\n"  # the text parse_source reads after its rewrites (the linker's, d2l's idioms)
    assert parsed_module(other).code == other
    abandon_early_checks()
    assert syntax_check._EARLY == {} and unchecked_parse._EARLY == []


def test_the_early_parse_raises_its_error_where_the_parse_is_taken(tmp_path, monkeypatch):
    from porter.frontend import unchecked_parse

    def refused(text, early=True):
        raise RecursionError("maximum recursion depth exceeded")

    path = tmp_path / "net.py"
    path.write_text(TEXTS["fine"])
    monkeypatch.setattr(unchecked_parse, "parsed_module", refused)  # the function the thread is handed
    start_early_check(path, str(path))
    checked_syntax(TEXTS["fine"], str(path), path)
    monkeypatch.undo()
    with pytest.raises(RecursionError, match="maximum recursion"):
        unchecked_parse.parsed_module(TEXTS["fine"])


def test_no_parse_after_a_failed_check(tmp_path):
    path = tmp_path / "deep.py"
    path.write_text(TEXTS["too_deep"])
    start_early_check(path, str(path))
    with pytest.raises(SourceError, match="code nested"):
        checked_syntax(TEXTS["too_deep"], str(path), path)
    early = syntax_check._EARLY[str(path)]
    assert early.parsed() is None  # libcst never saw the text the check refused
    abandon_early_checks()


def test_the_command_line_writes_what_the_in_order_conversion_makes(tmp_path):
    """`porter convert` (the early check and parse, the TPU lint and the reports aside) writes the files of a
    conversion run in order in this process (none of those aside)."""
    from porter.cli import main
    from porter.convert import ConvertOptions, convert
    from tests.golden.goldens import FIXTURES, read_tree

    out = tmp_path / "resnet"
    in_order = convert(ConvertOptions(FIXTURES / "resnet.py", out)).files
    assert main(["convert", str(FIXTURES / "resnet.py"), "-o", str(out)]) == 0
    assert read_tree(out) == in_order
