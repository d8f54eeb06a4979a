"""Fixtures of the verify tests: fixture models copied and converted once per session, the CLI run in-process."""

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from porter.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def porter_cli(capsys):
    """Run `porter ARGS...` in-process and capture what it prints."""

    def run(*argv):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exit_:
            code = exit_.code
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def convert_copy(fixture, directory, *extra):
    """Copy fixtures/<fixture>.py into `directory` and convert it to directory/out; returns (source, out)."""
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / f"{fixture}.py"
    shutil.copy(FIXTURES / f"{fixture}.py", source)
    out = directory / "out"
    code = main(["convert", str(source), "-o", str(out), *extra])
    assert code == 0, f"porter convert {fixture} exited {code}"
    return source, out


@pytest.fixture(scope="session")
def converted(tmp_path_factory):
    """converted(fixture) -> OUT of an unmodified copy, converted once per session."""
    cache = {}

    def get(fixture):
        if fixture not in cache:
            cache[fixture] = convert_copy(fixture, tmp_path_factory.mktemp(fixture))[1]
        return cache[fixture]

    return get
