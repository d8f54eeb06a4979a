"""Build step: ship the top-level templates/ folder in the wheel as porter/templates (package data).

templates/ stays the one source. A checkout (and an editable install) reads it in place; an installed wheel reads
porter/templates; porter.codegen.emit.TEMPLATES finds either. Everything else is configured in pyproject.toml.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

TEMPLATES = Path(__file__).resolve().parent / "templates"


class BuildPyWithTemplates(build_py):
    """build_py that also copies templates/* to porter/templates/ in the build tree."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "porter" / "templates"
        self.mkpath(str(target))
        for source in sorted(TEMPLATES.iterdir()):
            if source.is_file():
                self.copy_file(str(source), str(target / source.name))

    def get_outputs(self, include_bytecode=True):
        outputs = super().get_outputs(include_bytecode)
        if getattr(self, "editable_mode", False):
            return outputs
        target = Path(self.build_lib) / "porter" / "templates"
        return outputs + [str(target / source.name) for source in sorted(TEMPLATES.iterdir()) if source.is_file()]


setup(cmdclass={"build_py": BuildPyWithTemplates})
