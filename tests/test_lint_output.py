"""Generated Python passes `ruff check --select E,F,W --ignore E501` for every fixture."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.golden.goldens import fixture_conversion, fixture_names

RUFF = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))


@pytest.fixture(scope="module")
def findings(tmp_path_factory):
    """{fixture: [finding]}: every fixture's generated .py files written out, then one ruff run over all of them."""
    if not Path(RUFF).exists():
        pytest.skip("ruff is not installed")
    root = tmp_path_factory.mktemp("lint")
    for name in fixture_names():
        for relative, text in fixture_conversion(name).files.items():
            if relative.endswith(".py"):
                path = root / name / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    result = subprocess.run([RUFF, "check", "--isolated", "--no-cache", "--select", "E,F,W", "--ignore", "E501",
                             "--output-format", "json", str(root)], capture_output=True, text=True, timeout=120,
                            check=False)
    if result.returncode not in (0, 1):
        pytest.fail(f"ruff failed: {result.stderr}")
    found = {}
    for item in json.loads(result.stdout or "[]"):
        relative = Path(item["filename"]).relative_to(root)
        found.setdefault(relative.parts[0], []).append(
            f"{relative.as_posix()}:{item['location']['row']}:{item['location']['column']}: {item['code']} "
            f"{item['message']}")
    return found


@pytest.mark.parametrize("name", fixture_names())
def test_generated_code_is_lint_clean(name, findings):
    problems = findings.get(name, [])
    assert not problems, "ruff check --select E,F,W --ignore E501:\n" + "\n".join(problems)
