"""Golden output trees: tests/golden/<fixture>/ holds everything `porter convert fixtures/<fixture>.py` writes.

Shared by tests/golden/test_golden.py and scripts/regenerate_goldens.py. Conversions run in memory with OUT set to
the golden directory itself, so the manifest's source path (relative to OUT) is the same on every checkout.
"""

import functools
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
GOLDEN = ROOT / "tests" / "golden"
KEEP = {"__init__.py", "conftest.py", "goldens.py", "test_golden.py", "__pycache__"}
# Convert options per fixture where the defaults are not what the golden should show: {stem: {option: value}}.
OPTIONS = {}


def fixture_names():
    return sorted(path.stem for path in FIXTURES.glob("*.py"))


def convert_fixture(name):
    """{relative path: text} that `porter convert` produces for fixtures/<name>.py into tests/golden/<name>/."""
    return dict(fixture_conversion(name).files)


@functools.cache
def fixture_conversion(name):
    """The Conversion of fixtures/<name>.py into tests/golden/<name>/ (in memory; one per test process, shared by
    the golden, lint and report tests; treat it as read-only)."""
    from porter.convert import ConvertOptions, convert

    return convert(ConvertOptions(FIXTURES / f"{name}.py", GOLDEN / name, **OPTIONS.get(name, {})))


def read_tree(directory):
    """{relative POSIX path: text} of every file under `directory`."""
    directory = Path(directory)
    if not directory.is_dir():
        return {}
    return {path.relative_to(directory).as_posix(): path.read_text() for path in sorted(directory.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts}


def write_golden(name, files):
    """Replace tests/golden/<name>/ with `files`."""
    target = GOLDEN / name
    if target.exists():
        shutil.rmtree(target)
    for relative, text in sorted(files.items()):
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))


def stale_goldens():
    """Golden directories whose fixture no longer exists."""
    names = set(fixture_names())
    return sorted(p.name for p in GOLDEN.iterdir() if p.is_dir() and p.name not in KEEP and p.name not in names)


def tree_diff(expected, actual, context=3):
    """A unified diff from the golden tree (`expected`) to the fresh conversion (`actual`)."""
    from porter.diff_command import unified

    pairs = [(name, expected.get(name), actual.get(name)) for name in sorted(set(expected) | set(actual))
             if expected.get(name) != actual.get(name)]
    return unified(pairs, context, colour=False)
