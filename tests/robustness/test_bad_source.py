"""Broken or hostile model sources: one clean `porter: error:` line, exit 2, nothing written.

Syntax errors are reported where CPython's own `compile()` puts them (libcst's positions differ).
"""

import os
import sys

import pytest

from tests.robustness.conftest import MINIMAL_MODEL, assert_clean_error

MODEL_UTF8 = MINIMAL_MODEL.replace("class Net", "# café, naïve, 模型\nclass Net")

SYNTAX_ERRORS = {
    "unclosed_call.py": "import torch.nn as nn\nclass A(nn.Module:\n    pass\n",
    "bad_operator.py": "x = 1 +* 2\n",
    "never_closed.py": "x = (\n",
    "python2_print.py": 'print "hello"\n',
    "tabs_and_spaces.py": "def f():\n\tif True:\n        return 1\n",
    "bad_indent.py": "def f():\nreturn 1\n",
    "stray_dedent.py": "if True:\n        x = 1\n    y = 2\n",
    "deep_nesting.py": "x = " + "(" * 300 + "1" + ")" * 300 + "\n",
    "null_escape.py": 'x = "\\N{NOT A REAL NAME}"\n',
    "keyword_target.py": "class = 3\n",
    "bad_fstring.py": 'x = f"{1 +}"\n',
    "return_outside.py": "import torch.nn as nn\nreturn nn\n",
}


def cpython_location(path):
    """file:line:col exactly as CPython's compile() reports it."""
    try:
        compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    except SyntaxError as error:
        return f"{path}:{error.lineno}:{error.offset}: "
    pytest.fail(f"{path.name} compiles")


@pytest.mark.parametrize("name", sorted(SYNTAX_ERRORS))
def test_syntax_errors_at_cpython_location(porter_cli, tmp_path, name):
    source = tmp_path / name
    source.write_text(SYNTAX_ERRORS[name])
    out = tmp_path / "out"
    line = assert_clean_error(porter_cli("convert", source, "-o", out), cpython_location(source))
    assert "syntax error" in line or "cannot parse" in line
    assert not out.exists()


@pytest.mark.parametrize("name, content, needle", [
    ("empty.py", b"", "empty file"),
    ("blank.py", b"\n   \n\t\n", "empty file"),
    ("comment_only.py", b"# nothing here\n", "no nn.Module subclass found"),
    ("binary.py", bytes(range(256)) * 4, "binary file"),
    ("elf.py", b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 64, "binary file"),
    ("latin1_no_cookie.py", MODEL_UTF8.encode("latin-1", "replace"), "cannot decode"),
    ("unknown_cookie.py", b"# -*- coding: klingon -*-\nx = 1\n", "unknown encoding: klingon"),
    ("lying_cookie.py", b"# coding: ascii\n# caf\xc3\xa9\nx = 1\n", "cannot decode"),
    ("utf16.py", "x = 1\n".encode("utf-16"), "binary file"),
    ("no_model.py", b"import os\n\n\ndef f():\n    return os.sep\n", "no nn.Module subclass found"),
    ("plain_class.py", b"class Net:\n    def forward(self, x):\n        return x\n", "no nn.Module subclass found"),
])
def test_unreadable_content(porter_cli, tmp_path, name, content, needle):
    source = tmp_path / name
    source.write_bytes(content)
    out = tmp_path / "out"
    assert_clean_error(porter_cli("convert", source, "-o", out), f"{source}: ", needle)
    assert not out.exists()


@pytest.mark.parametrize("encoding, cookie", [
    ("utf-8", ""), ("latin-1", "# -*- coding: latin-1 -*-\n"), ("cp1252", "# vim: set fileencoding=cp1252 :\n"),
    ("utf-8-sig", ""),
])
def test_declared_encodings_are_honoured(porter_cli, tmp_path, encoding, cookie):
    source = tmp_path / "encoded.py"
    text = cookie + MINIMAL_MODEL.replace("super().__init__()", "super().__init__()\n        # café au lait")
    source.write_bytes(text.encode(encoding))
    out = tmp_path / "out"
    result = porter_cli("convert", source, "-o", out, "--input-shape", "4")
    assert result.code == 0, result.err
    generated = (out / "encoded_keras.py").read_bytes()
    assert "café au lait" in generated.decode("utf-8")
    compile(generated, "encoded_keras.py", "exec")  # from bytes: a carried-over coding cookie would break it


def test_crlf_and_cr_line_endings(porter_cli, tmp_path):
    for index, newline in enumerate(("\r\n", "\r")):
        source = tmp_path / f"endings{index}.py"
        source.write_bytes(MINIMAL_MODEL.replace("\n", newline).encode())
        result = porter_cli("convert", source, "-o", tmp_path / f"out{index}", "--input-shape", "4")
        assert result.code == 0, result.err


def test_missing_path(porter_cli, tmp_path):
    assert_clean_error(porter_cli("convert", tmp_path / "nope.py", "-o", tmp_path / "out"), "no such file")
    assert not (tmp_path / "out").exists()


def test_directory_instead_of_file(porter_cli, tmp_path):
    (tmp_path / "model.py").mkdir()
    assert_clean_error(porter_cli("convert", tmp_path / "model.py", "-o", tmp_path / "out"), "is a directory")


def test_unreadable_file(porter_cli, tmp_path):
    source = tmp_path / "secret.py"
    source.write_text(MINIMAL_MODEL)
    source.chmod(0)
    try:
        if os.access(source, os.R_OK):
            pytest.skip("this user (root) can read a mode-000 file")
        assert_clean_error(porter_cli("convert", source, "-o", tmp_path / "out"), "permission denied")
    finally:
        source.chmod(0o600)


def test_fifo_is_not_read_forever(porter_cli, tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(tmp_path / "pipe.py")
    assert_clean_error(porter_cli("convert", tmp_path / "pipe.py", "-o", tmp_path / "out"), "not a regular file")


def test_output_path_is_a_file(porter_cli, tmp_path):
    source = tmp_path / "net.py"
    source.write_text(MINIMAL_MODEL)
    (tmp_path / "taken").write_text("mine")
    assert_clean_error(porter_cli("convert", source, "-o", tmp_path / "taken"), "not a directory")
    assert (tmp_path / "taken").read_text() == "mine"


def test_huge_file_is_refused_before_reading(porter_cli, tmp_path):
    source = tmp_path / "huge.py"
    with open(source, "wb") as handle:  # sparse: nothing is written to disk
        handle.truncate(3 * 2**30)
    assert_clean_error(porter_cli("convert", source, "-o", tmp_path / "out"), "too large")


def test_device_is_not_read(porter_cli, tmp_path):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    (tmp_path / "model.py").symlink_to("/dev/zero")
    assert_clean_error(porter_cli("convert", tmp_path / "model.py", "-o", tmp_path / "out"), "not a regular file")


def test_undecodable_file_names(porter_cli, tmp_path):
    if sys.platform == "darwin":
        pytest.skip("macOS file systems refuse names that are not UTF-8")
    name = os.fsdecode(b"m\xff.py")
    source = tmp_path / name
    try:
        source.write_text(MINIMAL_MODEL)
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    assert_clean_error(porter_cli("convert", source, "-o", tmp_path / "out"), "SRC", "m\\xff.py", "not valid UTF-8")
    ok = tmp_path / "ok.py"
    ok.write_text(MINIMAL_MODEL)
    assert_clean_error(porter_cli("convert", ok, "-o", tmp_path / os.fsdecode(b"o\xff")), "OUT", "not valid UTF-8")
