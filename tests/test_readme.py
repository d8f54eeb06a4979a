"""README.md's command synopsis names every option of `porter convert` (a new flag must be documented there), its
supported-ops table is the registry's, and the set-up section documents the browser opt-in that scripts/setup.sh
reads."""

import argparse
import re
from pathlib import Path

from porter.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]


def _convert_options():
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    convert = commands.choices["convert"]
    return {tuple(action.option_strings) for action in convert._actions
            if action.option_strings and "--help" not in action.option_strings}


def test_convert_synopsis_lists_every_option():
    readme = (ROOT / "README.md").read_text()
    synopsis = re.search(r"`porter convert SRC (.*?)`", readme, re.S)
    assert synopsis, "README.md has no `porter convert SRC ...` synopsis"
    options = _convert_options()
    assert {("--train-script",), ("--framework",)} <= options
    missing = sorted(names[-1] for names in options if not any(f"[{name} " in synopsis.group(1)
                                                                  or f"[{name}]" in synopsis.group(1)
                                                                  for name in names))
    assert not missing, f"README.md's convert synopsis omits {missing}"
    explained = {("--class",), ("--input-shape",), ("--init-args",), ("--train-script",), ("--framework",)}
    assert explained <= options
    undocumented = sorted(names[-1] for names in explained if f"- `{names[-1]}`" not in readme)
    assert not undocumented, f"README.md has no `- {undocumented[0]}` line"


def test_readme_documents_the_browser_opt_in():
    readme = (ROOT / "README.md").read_text()
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    for switch in ("PORTER_INSTALL_BROWSER=1", "--with-browser"):
        assert switch in readme and switch in setup


def test_supported_ops_table_is_the_registrys():
    """The "Supported ops" table is `porter ops --format markdown` as it prints today: a new rule shows up there."""
    import contextlib
    import io

    from porter.cli import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["ops", "--format", "markdown"]) == 0
    table = printed.getvalue().strip("\n")  # the table, a blank line, the count
    readme = (ROOT / "README.md").read_text()
    start = readme.index("| family | torch names |")
    assert readme[start:start + len(table)] == table, "regenerate README's table: porter ops --format markdown"
