"""Helpers shared by the robustness tests: run the CLI in-process and check its one-line errors."""

import functools
import textwrap
from dataclasses import dataclass

import pytest

from porter.cli import main


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def run_porter(capsys, *argv):
    """Run `porter ARGS...` in-process; any exception other than SystemExit is a porter bug and propagates."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return CliResult(code, captured.out, captured.err)


@pytest.fixture
def porter_cli(capsys):
    """`porter_cli(*argv)` -> CliResult(code, out, err)."""
    return functools.partial(run_porter, capsys)


def assert_clean_error(result, *needles):
    """Exit 2 with exactly one `porter: error:` line (argparse adds its usage line first) and no traceback."""
    assert result.code == 2, (result.code, result.err)
    lines = [line for line in result.err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("porter: error: ")]
    assert len(errors) == 1, result.err
    assert all(line.startswith(("porter: error: ", "usage: ", "  ", "porter: warning: ")) for line in lines), \
        result.err
    assert "Traceback" not in result.err
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


def write_source(path, text):
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


MINIMAL_MODEL = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.fc = nn.Linear(4, width)

    def forward(self, x):
        return torch.relu(self.fc(x))
"""
