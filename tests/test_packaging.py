"""The wheel carries everything `porter convert` needs: every file of templates/ as porter/templates/, and the
build prints no setuptools deprecation warning (project.license is an SPDX string).

The wheel is built with .venv's setuptools (no build isolation, no download) from a copy of the files the build
reads. scripts/check_wheel.sh (run by .ci/run) goes further: it installs the wheel into a fresh venv and converts a
fixture with it.
"""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUILD_INPUTS = ("porter", "templates", "pyproject.toml", "setup.py", "MANIFEST.in", "README.md")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(wheel path, the build's output) of a wheel built through setuptools' PEP 517 backend."""
    pytest.importorskip("setuptools", minversion="77")
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    source.mkdir()
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, source / name)
    dist = work / "dist"
    build = ("import sys, setuptools.build_meta as backend\n"
             "print('built', backend.build_wheel(sys.argv[1]))")
    result = subprocess.run([sys.executable, "-W", "default", "-c", build, str(dist)], cwd=source,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    wheels = list(dist.glob("porter-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0], result.stdout + result.stderr


def test_wheel_lists_every_template(built):
    wheel, _ = built
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = sorted(path.name for path in (ROOT / "templates").iterdir() if path.is_file())
    assert "class.py.j2" in templates and "train_tpu.py.j2" in templates
    missing = [name for name in templates if f"porter/templates/{name}" not in names]
    assert not missing, f"the wheel lacks porter/templates/{missing}"
    record = next(name for name in names if name.endswith(".dist-info/RECORD"))
    listed = zipfile.ZipFile(wheel).read(record).decode()
    assert all(f"porter/templates/{name}," in listed for name in templates)


def test_wheel_templates_match_the_source_folder(built):
    wheel, _ = built
    with zipfile.ZipFile(wheel) as archive:
        for path in (ROOT / "templates").iterdir():
            assert archive.read(f"porter/templates/{path.name}") == path.read_bytes(), path.name


def test_build_prints_no_deprecation_and_declares_the_spdx_licence(built):
    wheel, output = built
    assert "Deprecat" not in output and "deprecated" not in output, output[-3000:]
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in metadata


def test_checkout_finds_its_templates_folder():
    from porter.codegen.templates import TEMPLATES

    assert TEMPLATES == ROOT / "templates" and (TEMPLATES / "class.py.j2").is_file()
