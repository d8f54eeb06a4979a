"""porter checks its own output before reporting: every generated Python file compiles, and no generated module
uses a name it does not define or import (ruff's F821). Output that fails is a porter bug (`InternalError`, exit 3),
never a port reported as converted.
"""

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

from porter.errors import InternalError, SourceError

# Generated files that are checked for undefined names: the model code and what it imports (runtime, support).
# Tests and scripts are compiled too; their names come from the packages they import.
UNDEFINED_NAME_RULE = "F821"


def check_generated(files, source=None):
    """Raise InternalError for the first generated .py file that does not compile or uses an undefined name.

    A name the source itself uses without defining it (`source`: the SourceFile) is the source's problem, not
    porter's: that is a SourceError at the source's line."""
    python_files = {name: text for name, text in sorted(files.items())
                    if name.endswith(".py") and isinstance(text, str)}
    for name, text in python_files.items():
        try:
            compile(text, name, "exec", dont_inherit=True)
        except SyntaxError as error:
            raise InternalError(f"generated code does not compile: {error.msg}", name, error.lineno) from None
    source_findings = None
    all_findings = undefined_names_in(python_files)
    for name in python_files:
        findings = all_findings.get(name)
        if not findings:
            continue
        if source is not None and source_findings is None:
            source_findings = {finding.name: finding for finding in undefined_names(source.path.name, source.text)}
        for finding in findings:
            if source_findings and finding.name in source_findings:
                raise SourceError(f"undefined name `{finding.name}`", source.display_path,
                                  source_findings[finding.name].line,
                                  hint="the source itself does not define or import it; fix the source")
        raise InternalError(f"generated code uses an undefined name `{findings[0].name}`", name, findings[0].line)


class UndefinedName(NamedTuple):
    """One use of a name a module neither defines nor imports (ruff's F821)."""

    line: int
    name: str


def undefined_names(name, text):
    """UndefinedName findings of ruff's F821 in `text`, first line first ([] when ruff is not installed)."""
    return undefined_names_in({name: text}).get(name, [])


def undefined_names_in(files):
    """{name: UndefinedName findings, first line first} for the modules in `files` ({relative path: text}), from one
    ruff run over copies in a temporary folder (a run per file cost a process start each); {} without ruff."""
    ruff = _ruff()
    if ruff is None or not files:
        return {}
    with tempfile.TemporaryDirectory(prefix="porter-check-") as folder:
        paths = {}
        for name, text in files.items():
            path = Path(folder, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            paths[str(path.resolve())] = name
        result = subprocess.run(  # files named one by one are checked even where ruff excludes their folder
            [ruff, "check", "--no-cache", "--isolated", "--select", UNDEFINED_NAME_RULE, "--output-format", "json",
             *paths], capture_output=True, text=True, check=False)
        try:
            findings = json.loads(result.stdout or "[]")
        except ValueError:
            return {}
        found = {}
        for finding in findings:
            name = paths.get(str(Path(finding["filename"]).resolve()))
            if name is None:
                continue
            match = re.search(r"`([^`]+)`", finding["message"])
            found.setdefault(name, []).append(
                UndefinedName(finding["location"]["row"], match.group(1) if match else finding["message"]))
    return {name: sorted(items) for name, items in found.items()}


def _ruff():
    found = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    return found if Path(found).exists() else None
