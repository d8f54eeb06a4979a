"""Mutation fuzzer over the fixtures: delete, duplicate, swap lines, truncate, change a number or a name, empty
an argument list. porter never answers with a traceback: every mutant either converts (exit 0/1, every emitted
Python file compiles) or gets one clean `porter: error:` line and exit 2 with nothing written. The CLI runs
in-process; any exception other than SystemExit escaping `porter.cli.main` is a porter bug."""

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

FIXTURES = sorted((Path(__file__).resolve().parents[2] / "fixtures").glob("*.py"))
NO_SHRINKING = (Phase.explicit, Phase.reuse, Phase.generate)
KINDS = ("delete", "duplicate", "swap", "truncate_lines", "truncate_chars", "renumber", "rename", "drop_arguments")
# Token-level mutations keep most files parseable, so they reach the translator rather than the syntax check.
NUMBERS = ("0", "1", "-1", "3", "7", "1000000", "0.5", "-2.5", "True", "None")
NAME_PATTERN = re.compile(r"\b[A-Za-z_][A-Za-z_0-9]*\b")
NUMBER_PATTERN = re.compile(r"(?<![\w.])\d+(\.\d+)?(?![\w.])")


def replace_token(line, pattern, a, b, choices):
    matches = list(pattern.finditer(line))
    if not matches:
        return line
    match = matches[int(a * len(matches))]
    return line[:match.start()] + choices[int(b * len(choices))] + line[match.end():]


def drop_arguments(line, a):
    """Empty the argument list of one call on the line: `f(a, b)` -> `f()` (a call torch would reject)."""
    opens = [index for index, char in enumerate(line) if char == "("]
    if not opens:
        return line
    start = opens[int(a * len(opens))]
    depth = 0
    for index in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[index], 0)
        if depth == 0:
            return line[:start + 1] + line[index:]
    return line


def mutate(text, mutations):
    """Apply (kind, a, b) mutations, a and b being positions in [0, 1) of the current text."""
    lines = text.splitlines(keepends=True)
    names = sorted(set(NAME_PATTERN.findall(text)))
    for kind, a, b in mutations:
        if not lines:
            break
        i, j = int(a * len(lines)), int(b * len(lines))
        if kind == "drop_arguments":
            lines[i] = drop_arguments(lines[i], b)
        elif kind == "renumber":
            lines[i] = replace_token(lines[i], NUMBER_PATTERN, b, a, NUMBERS)
        elif kind == "rename":
            lines[i] = replace_token(lines[i], NAME_PATTERN, b, a, names)
        elif kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "truncate_lines":
            lines = lines[:i]
        else:
            joined = "".join(lines)
            lines = joined[:int(a * len(joined))].splitlines(keepends=True)
    return "".join(lines)


mutation = st.tuples(st.sampled_from(KINDS), st.floats(0, 1, exclude_max=True), st.floats(0, 1, exclude_max=True))


def check_mutant(porter_cli, directory, text):
    """Convert `text` (in a fresh directory under `directory`); assert a clean outcome. Returns the exit code."""
    directory = Path(tempfile.mkdtemp(dir=directory))
    source = directory / "mutant.py"
    source.write_text(text)
    out = directory / "out"
    result = porter_cli("convert", source, "-o", out)
    assert result.code in (0, 1, 2), result
    if result.code == 2:
        lines = [line for line in result.err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("porter: error: "), result.err
        assert not out.exists()
    else:
        for path in sorted(out.rglob("*.py")):
            compile(path.read_bytes(), str(path), "exec")
    return result.code


@settings(max_examples=3 * settings.default.max_examples,
          phases=NO_SHRINKING,  # a conversion per step makes shrinking take minutes; the note reproduces the case
          suppress_health_check=[*settings.default.suppress_health_check, HealthCheck.function_scoped_fixture])
@given(fixture=st.sampled_from(FIXTURES), mutations=st.lists(mutation, min_size=1, max_size=3))
def test_mutants_convert_or_fail_cleanly(porter_cli, tmp_path_factory, fixture, mutations):
    text = mutate(fixture.read_text(), mutations)
    note(f"{fixture.name} {mutations}")
    check_mutant(porter_cli, tmp_path_factory.mktemp("mutant"), text)


@pytest.mark.parametrize("fixture", FIXTURES[::4], ids=lambda p: p.name)
def test_every_prefix_of_a_fixture(porter_cli, tmp_path, fixture):
    """Truncation at every 7th line: most prefixes are broken files, a few are smaller models."""
    lines = fixture.read_text().splitlines(keepends=True)
    codes = [check_mutant(porter_cli, tmp_path, "".join(lines[:end])) for end in range(0, len(lines), 7)]
    assert 2 in codes
