"""porter checks its own output before reporting: every generated Python file compiles, and no generated module
uses a name it does not define or import (ruff's F821). Output that fails is a porter bug (`InternalError`, exit 3),
never a port reported as converted.
"""

import ast
import contextlib
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
    with undefined_names_started(python_files) as undefined:  # ruff runs while the files compile here
        for name, text in python_files.items():
            try:
                compile(text, name, "exec", dont_inherit=True)
            except SyntaxError as error:
                raise InternalError(f"generated code does not compile: {error.msg}", name, error.lineno) from None
        all_findings = undefined()
    source_findings = None
    for name, text in python_files.items():
        findings = unbound_names(text, all_findings.get(name, []))
        if not findings:
            continue
        if source is not None and source_findings is None:
            source_findings = {finding.name: finding for finding in unbound_names(
                source.text, undefined_names(source.path.name, source.text))}
        for finding in findings:
            if source_findings and finding.name in source_findings:
                raise SourceError(f"undefined name `{finding.name}`", source.display_path,
                                  source_findings[finding.name].line,
                                  hint="the source itself does not define or import it; fix the source")
        raise InternalError(f"generated code uses an undefined name `{findings[0].name}`", name, findings[0].line)


def unbound_names(text, findings):
    """The `findings` (ruff's F821 in `text`) that name nothing the function using them binds: ruff also reports a
    name a loop reads before the statement binding it, as Res2Net's `sp = spx[i] if i == 0 else sp + spx[i]` does
    (bound on the first turn): code that runs, in the source as in its port."""
    if not findings:
        return findings
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return findings
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    kept = []
    for finding in findings:
        around = [f for f in functions if f.lineno <= finding.line <= (f.end_lineno or f.lineno)]
        innermost = max(around, key=lambda f: f.lineno, default=None)
        if innermost is None or finding.name not in _bound_names(innermost):
            kept.append(finding)
    return kept


def _bound_names(function):
    """Names `function` binds in its own body (assignments, loop and `with` targets, imports, nested definitions)
    and its parameters."""
    arguments = function.args
    bound = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                             *filter(None, [arguments.vararg, arguments.kwarg])]}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not function:
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return bound


class UndefinedName(NamedTuple):
    """One use of a name a module neither defines nor imports (ruff's F821)."""

    line: int
    name: str


def undefined_names(name, text):
    """UndefinedName findings of ruff's F821 in `text`, first line first ([] when ruff is not installed)."""
    return undefined_names_in({name: text}).get(name, [])


def undefined_names_in(files):
    """{name: UndefinedName findings, first line first} for the modules in `files` ({relative path: text}), from one
    ruff run over copies in a temporary folder (a run per file cost a process start each); {} without ruff. Where
    the copies cannot be written (a full disk), each module goes to ruff through stdin instead."""
    with undefined_names_started(files) as undefined:
        return undefined()


@contextlib.contextmanager
def undefined_names_started(files):
    """Start ruff on `files` and give a function that waits for what `undefined_names_in` returns: the caller works
    while ruff runs (its ~0.25 s were added to every conversion's wall time)."""
    ruff = _ruff()
    if ruff is None or not files:
        yield dict
        return
    try:
        run = _undefined_names_in_folder(ruff, files)
    except OSError:
        yield lambda: _undefined_names_through_stdin(ruff, files)
        return
    try:
        yield run.findings
    finally:
        run.close()


def _undefined_names_through_stdin(ruff, files):
    found = {name: _findings(_run_ruff(ruff, ["--stdin-filename", name, "-"], text)) for name, text in files.items()}
    return {name: [f for _, f in items] for name, items in found.items() if items}


def _undefined_names_in_folder(ruff, files):
    return _RuffRun(ruff, files)


class _RuffRun:
    """One ruff process over copies of `files` in a temporary folder, started on construction."""

    def __init__(self, ruff, files):
        self.folder = tempfile.TemporaryDirectory(prefix="porter-check-")
        try:
            self.paths = {}
            for name, text in files.items():
                path = Path(self.folder.name, name)
                path.parent.mkdir(parents=True, exist_ok=True)
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(text)
                self.paths[str(path.resolve())] = name
            # files named one by one are checked even where ruff excludes their folder
            self.process = subprocess.Popen(_ruff_command(ruff, list(self.paths)), stdin=subprocess.DEVNULL,
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except BaseException:
            self.folder.cleanup()
            raise

    def findings(self):
        found = {}
        for filename, finding in _findings(self.process.communicate()[0]):
            name = self.paths.get(str(Path(filename).resolve()))
            if name is not None:
                found.setdefault(name, []).append(finding)
        return {name: sorted(items) for name, items in found.items()}

    def close(self):
        if self.process.returncode is None:  # the caller failed before asking: ruff's answer is not needed
            self.process.kill()
            self.process.communicate()
        self.folder.cleanup()


def _ruff_command(ruff, arguments):
    return [ruff, "check", "--no-cache", "--isolated", "--select", UNDEFINED_NAME_RULE, "--output-format", "json",
            *arguments]


def _run_ruff(ruff, arguments, text=None):
    """ruff's F821 findings as JSON text for `arguments` (files, or stdin with `text`)."""
    result = subprocess.run(_ruff_command(ruff, arguments), input=text, capture_output=True, text=True, check=False)
    return result.stdout


def _findings(output):
    """[(file name, UndefinedName)] from ruff's JSON output, first line first ([] for output that is not JSON)."""
    try:
        findings = json.loads(output or "[]")
    except ValueError:
        return []
    found = []
    for finding in findings:
        match = re.search(r"`([^`]+)`", finding["message"])
        found.append((finding["filename"], UndefinedName(finding["location"]["row"],
                                                         match.group(1) if match else finding["message"])))
    return sorted(found, key=lambda item: item[1])


def _ruff():
    found = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    return found if Path(found).exists() else None
