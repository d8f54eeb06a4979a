"""Byte-for-byte deterministic output: the same tree in any OUT directory and process, with no absolute paths."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from porter.convert import ConvertOptions, convert

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = sorted((ROOT / "fixtures").glob("*.py"))

_WRITE_ALL = textwrap.dedent("""
    import sys
    from pathlib import Path
    from porter.convert import ConvertOptions, convert
    from porter.output import write_tree
    target = Path(sys.argv[1])
    for source in sys.argv[2:]:
        out = target / (Path(source).stem + sys.argv[1][-1])  # OUT's own name differs between the two runs
        write_tree(out, convert(ConvertOptions(Path(source), out)).files)
""")


def _convert_twice(root):
    """Every fixture converted and written twice, by two processes with different PYTHONHASHSEEDs and OUT names."""
    runs = []
    for seed, target in (("0", root / "run_a"), ("4242", root / "run_b")):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        runs.append((target, subprocess.Popen([sys.executable, "-c", _WRITE_ALL, str(target), *map(str, FIXTURES)],
                                              cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)))
    for _, process in runs:
        _, errors = process.communicate(timeout=600)
        assert process.returncode == 0, errors[-3000:]
    return [target for target, _ in runs]


def _tree(directory):
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_every_fixture_converts_to_identical_trees(tmp_path):
    """One test (not one per fixture) so that the two conversion processes run once, also under pytest-xdist."""
    first_run, second_run = _convert_twice(tmp_path)
    problems = []
    for source in FIXTURES:
        first, second = _tree(first_run / f"{source.stem}a"), _tree(second_run / f"{source.stem}b")
        if not first or sorted(first) != sorted(second):
            problems.append(f"{source.stem}: different file sets {sorted(first)} / {sorted(second)}")
            continue
        differing = [name for name in first if first[name] != second[name]]
        if differing:
            problems.append(f"{source.stem}: {differing} depend on hash order or OUT's name")
        # the source path relative to OUT is recorded by contract (manifest, generated tests): see the xfail below
        recorded = [entry["path"] for entry in json.loads(first["porter-manifest.json"])["sources"]]
        for name, data in first.items():
            text = data.decode("utf-8", errors="replace")
            for path in recorded:
                text = text.replace(path, Path(path).name)
            for leak in (str(tmp_path), str(ROOT), str(Path.home())):
                if leak in text:
                    problems.append(f"{source.stem}: {name} contains the absolute path {leak}")
    assert not problems, "\n".join(problems)


@pytest.mark.xfail(reason="porter-manifest.json records the source path relative to OUT (DESIGN.md), so where OUT is "
                          "relative to SRC shows in it, and a far-away OUT climbs through SRC's absolute location "
                          "('../../../work/...'); see porter/convert.py build_manifest", strict=False)
def test_output_location_does_not_change_the_tree(tmp_path):
    source = ROOT / "fixtures" / "lenet.py"
    near = convert(ConvertOptions(source, tmp_path / "out")).files
    assert near == convert(ConvertOptions(source, tmp_path / "deeper" / "still" / "out")).files
    assert str(ROOT).lstrip("/") not in near["porter-manifest.json"]
