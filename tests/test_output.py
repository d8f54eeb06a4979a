"""porter.output's file modes: a script with a shebang (train_tpu.py) is written executable, other files and OUT
itself get the usual modes of the umask (not mkdtemp's 0o700), on a first write and on --force alike."""

import os
import stat

import pytest

from porter.output import write_tree

FILES = {"train_tpu.py": "#!/usr/bin/env python3\nprint('hi')\n", "model.py": "x = 1\n",
         "weights.bin": b"#!binary-looking\x00", "data/notes.txt": "text, #! not first\n",
         "porter-manifest.json": '{"files": ["train_tpu.py", "model.py", "weights.bin", "data/notes.txt"]}\n'}


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _mode(path):
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("force", [False, True])
def test_shebang_scripts_are_executable_and_the_rest_is_not(tmp_path, umask_022, force):
    out = tmp_path / "out"
    write_tree(out, FILES)
    if force:
        write_tree(out, FILES, force=True)
    assert _mode(out / "train_tpu.py") == 0o755
    assert _mode(out / "weights.bin") == 0o755  # bytes starting with a shebang alike
    assert _mode(out / "model.py") == 0o644 and _mode(out / "data" / "notes.txt") == 0o644
    assert _mode(out) == 0o755
    assert (out / "train_tpu.py").read_text() == FILES["train_tpu.py"]


def test_umask_is_kept(tmp_path):
    previous = os.umask(0o077)
    try:
        write_tree(tmp_path / "out", FILES)
    finally:
        os.umask(previous)
    assert _mode(tmp_path / "out" / "train_tpu.py") == 0o700
    assert _mode(tmp_path / "out" / "model.py") == 0o600 and _mode(tmp_path / "out") == 0o700
