"""porter/quick_exit.py: `porter convert` as a program ends with os._exit after flushing; its exit status, output
and files are those of a normal exit. In-process callers of main(argv) get the code back."""

import json
import subprocess
import sys
from pathlib import Path

from porter import quick_exit
from tests.robustness.conftest import MINIMAL_MODEL, write_source

REPO = Path(__file__).resolve().parents[1]

STUBBED_MODEL = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2.0

    def forward(self, x):
        return torch.ops.my_ext.op(x * self.scale)
"""  # a stub (exit 1), and inputs porter cannot infer (a warning)


def porter_process(*argv):
    return subprocess.run([sys.executable, "-m", "porter", *map(str, argv)], capture_output=True, text=True,
                          cwd=REPO, timeout=300, check=False)


def test_a_converted_file_exits_0_with_its_output_and_files(tmp_path):
    source = write_source(tmp_path / "net.py", MINIMAL_MODEL)
    result = porter_process("convert", source, "-o", tmp_path / "out", "--input-shape", "4")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"porter: wrote {tmp_path / 'out'} (") and result.stdout.endswith(")\n")
    manifest = json.loads((tmp_path / "out" / "porter-manifest.json").read_text())
    assert all((tmp_path / "out" / name).is_file() for name in manifest["files"])


def test_a_port_with_stubs_exits_1_and_warnings_reach_stderr(tmp_path):
    source = write_source(tmp_path / "net.py", STUBBED_MODEL)
    result = porter_process("convert", source, "-o", tmp_path / "out")
    assert result.returncode == 1, result.stderr
    assert "stubs: see PORTING.md" in result.stdout and "example inputs of Net are unknown" in result.stderr
    assert (tmp_path / "out" / "PORTING.md").is_file()


def test_in_process_callers_get_the_code_back(monkeypatch, tmp_path, capsys):
    from porter.cli import main

    monkeypatch.setattr(quick_exit, "_KEPT", [])
    asked, keep = [], quick_exit.keep
    monkeypatch.setattr(quick_exit, "keep", lambda *objects: (asked.append(objects), keep(*objects)))
    source = write_source(tmp_path / "net.py", MINIMAL_MODEL)
    assert main(["convert", str(source), "-o", str(tmp_path / "out"), "--input-shape", "4"]) == 0  # not ended
    assert asked  # run_convert asked for the quick exit ...
    assert not quick_exit._KEPT  # ... and main, called as a function, let the conversion go: freed as usual
    assert not quick_exit.wanted(["convert", str(source)])  # ... which main(argv) does not take
    assert not quick_exit.wanted(None)  # nor a process whose program is not porter (pytest)
    assert "porter: wrote" in capsys.readouterr().out


def test_only_porter_is_the_program(monkeypatch):
    main_file = REPO / "porter" / "__main__.py"
    for argv0, expected in [(str(main_file), True), ("/usr/local/bin/porter", True), ("porter.exe", True),
                            (str(REPO / "porter" / "cli.py"), False), ("/usr/lib/python3/pytest/__main__.py", False),
                            ("", False)]:
        monkeypatch.setattr(sys, "argv", [argv0])
        assert quick_exit._porter_is_the_program() is expected, argv0


def test_a_profiled_run_writes_its_profile(tmp_path):
    """`python -m cProfile -o OUT -m porter convert ...`: the profile is written at exit, so no quick exit."""
    source = write_source(tmp_path / "net.py", MINIMAL_MODEL)
    profile = tmp_path / "convert.prof"
    result = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "porter", "convert",
                             str(source), "-o", str(tmp_path / "out"), "--input-shape", "4"], capture_output=True,
                            text=True, cwd=REPO, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert profile.is_file() and profile.stat().st_size > 0
