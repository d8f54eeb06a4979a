"""OUT/test_equivalence.py: deterministic, free of absolute paths and of porter, and it runs standalone."""

import ast
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from porter.convert import ConvertOptions, convert
from porter.outputs.equivalence_tests import SUPPORT_ROOTS, support_code, support_index

TINY = textwrap.dedent('''
    import torch.nn as nn
    import torch.nn.functional as F


    class Tiny(nn.Module):
        def __init__(self, width=4):
            super().__init__()
            self.conv = nn.Conv2d(3, width, 3, padding=1)
            self.bn = nn.BatchNorm2d(width)
            self.head = nn.Linear(width, 5)

        def forward(self, x):
            return self.head(F.relu(self.bn(self.conv(x))).mean(dim=(2, 3)))
''')

NO_PORTER = "import sys; sys.modules['porter'] = None; import pytest; sys.exit(pytest.main(sys.argv[1:]))"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tiny")
    source = directory / "model" / "tiny.py"
    source.parent.mkdir()
    source.write_text(TINY)
    out = directory / "ports" / "tiny_keras"
    conversion = convert(ConvertOptions(source, out, input_specs=["3,12,12"], init_args={"width": 6}))
    out.mkdir(parents=True)
    for name, text in conversion.files.items():
        (out / name).write_text(text)
    return source, out, conversion


def run_generated(out, env=None, *args):
    environment = {**os.environ, "PORTER_EXAMPLES": "2", **(env or {})}
    environment.pop("PORTER_SOURCE", None) if "PORTER_SOURCE" not in (env or {}) else None
    return subprocess.run([sys.executable, "-c", NO_PORTER, "-q", "-p", "no:cacheprovider", "test_equivalence.py",
                           *args], cwd=out, env=environment, capture_output=True, text=True, timeout=600, check=False)


def test_generated_test_is_deterministic_and_relocatable(tiny):
    source, out, conversion = tiny
    text = conversion.files["test_equivalence.py"]
    again = convert(ConvertOptions(source, out, input_specs=["3,12,12"], init_args={"width": 6}))
    assert again.files["test_equivalence.py"] == text
    assert "test_equivalence.py" in conversion.manifest["files"]
    assert str(out) not in text and str(source.parent) not in text and "/tmp" not in text
    tree = ast.parse(text)
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "porter" not in imported
    assert 'CLASSES = ["Tiny"]' in text and "../../model/tiny.py" in text


def test_support_code_is_dependency_closed():
    index = support_index()
    imports, text = support_code()
    body = ast.parse(text).body
    defined = {node.name for node in body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    defined |= {target.id for node in body if isinstance(node, ast.Assign) for target in node.targets}
    assert set(SUPPORT_ROOTS) <= defined
    for name in defined:
        missing = {used for used in index[name].uses if used in index and used not in defined}
        assert not missing, (name, missing)
    assert "copy_torch_weights" not in defined  # only what the tests need is copied
    assert all("porter" not in line for line in imports)


def test_support_index_from_the_cache_folder_equals_the_parsed_one(tmp_path, monkeypatch):
    import porter.cache_folder

    def fields(index):
        return [(d.name, d.order, d.source, d.uses, d.imports) for d in index.values()]

    monkeypatch.setattr(porter.cache_folder, "cache_folder", lambda: str(tmp_path))
    support_index.cache_clear()
    try:
        parsed = fields(support_index())  # computed, then stored
        (stored,) = tmp_path.glob("test-support-index-*.marshal")
        support_index.cache_clear()
        assert fields(support_index()) == parsed  # read back
        stored.write_bytes(b"\x00 damaged")
        support_index.cache_clear()
        assert fields(support_index()) == parsed
    finally:
        support_index.cache_clear()


def test_generated_test_runs_without_porter_and_honours_porter_source(tiny, tmp_path):
    source, out, _ = tiny
    moved = tmp_path / "elsewhere"
    shutil.copytree(out, moved)  # the recorded relative path no longer leads to the source
    result = run_generated(moved, {"PORTER_SOURCE": str(source)})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "4 passed" in result.stdout


def test_generated_test_failure_localises_and_reproduces(tiny, tmp_path):
    source, out, _ = tiny
    mutated = tmp_path / "tiny.py"
    mutated.write_text(source.read_text().replace("nn.BatchNorm2d(width)", "nn.BatchNorm2d(width, eps=0.5)"))
    result = run_generated(out, {"PORTER_SOURCE": str(mutated)}, "-k", "test_forward")
    assert result.returncode == 1, result.stdout[-3000:]
    assert "MISMATCH in Tiny: forward" in result.stdout
    assert "first diverging submodule: bn (BatchNorm2d)" in result.stdout
    assert "PORTER_CASE='batch=" in result.stdout and "-k 'test_forward and Tiny'" in result.stdout
