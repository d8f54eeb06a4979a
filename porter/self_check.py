"""porter checks its own output before reporting: every generated Python file compiles, and no generated module
uses a name it does not define or import (ruff's F821). Output that fails is a porter bug (`InternalError`, exit 3),
never a port reported as converted.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

from porter.errors import InternalError

# Generated files that are checked for undefined names: the model code and what it imports (runtime, support).
# Tests and scripts are compiled too; their names come from the packages they import.
UNDEFINED_NAME_RULE = "F821"


def check_generated(files):
    """Raise InternalError for the first generated .py file that does not compile or uses an undefined name."""
    python_files = {name: text for name, text in sorted(files.items())
                    if name.endswith(".py") and isinstance(text, str)}
    for name, text in python_files.items():
        try:
            compile(text, name, "exec", dont_inherit=True)
        except SyntaxError as error:
            raise InternalError(f"generated code does not compile: {error.msg}", name, error.lineno) from None
    for name, text in python_files.items():
        finding = first_undefined_name(name, text)
        if finding is not None:
            line, message = finding
            raise InternalError(f"generated code uses an undefined name: {message}", name, line)


def first_undefined_name(name, text):
    """(line, message) of the first F821 finding in `text`, or None (also when ruff is not installed)."""
    ruff = _ruff()
    if ruff is None:
        return None
    result = subprocess.run(
        [ruff, "check", "--no-cache", "--isolated", "--select", UNDEFINED_NAME_RULE, "--output-format", "json",
         "--stdin-filename", name, "-"],
        input=text, capture_output=True, text=True, check=False)
    try:
        findings = json.loads(result.stdout or "[]")
    except ValueError:
        return None
    if not findings:
        return None
    first = min(findings, key=lambda f: (f["location"]["row"], f["location"]["column"]))
    return first["location"]["row"], first["message"]


def _ruff():
    found = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    return found if Path(found).exists() else None
