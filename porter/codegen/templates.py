"""The Jinja environment of the generated files: porter's templates, compiled once and kept between runs.

Compiling the templates (model module, class, runtime, training script, tests, reports) took about a tenth of
converting a 3,500-line file, the same work on every run. Compiled templates go to Jinja's bytecode cache in a
private per-user folder of the temporary directory; each is checked against its template's source when loaded, so
an edited template compiles again. Where no such folder can be made, or a write fails, templates are compiled as
before: the cache changes no output.
"""

import functools
from pathlib import Path

import jinja2


def _templates_dir():
    """porter/templates in an installed wheel (setup.py copies templates/ there), else the checkout's templates/."""
    package = Path(__file__).resolve().parents[1]
    installed = package / "templates"
    return installed if installed.is_dir() else package.parent / "templates"


TEMPLATES = _templates_dir()


class _BytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's file cache, for which a failed write only means compiling again next time."""

    def dump_bytecode(self, bucket):
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


@functools.lru_cache(maxsize=1)
def bytecode_cache():
    """The shared cache of compiled templates, or None where no safe cache folder exists."""
    try:
        return _BytecodeCache()
    except (RuntimeError, OSError):  # Jinja refuses a temporary folder another user owns
        return None


def environment(autoescape=False):
    """A Jinja environment over porter's templates (StrictUndefined; trim, lstrip, keep the trailing newline)."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                              autoescape=autoescape, bytecode_cache=bytecode_cache())
