"""porter/output.py: OUT is never clobbered without --force, --force replaces only porter's own files, and an
interruption (error or Ctrl-C) at any point leaves the old output or the complete new one, never a mix."""

import json
import os
import shutil
import signal

import pytest

import porter.output
from porter.errors import OutputError, UsageError
from porter.output import write_tree
from tests.robustness.conftest import MINIMAL_MODEL, assert_clean_error, write_source


def snapshot(directory):
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def leftovers(parent):
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(".porter-"))


@pytest.fixture
def previous(porter_cli, tmp_path):
    """OUT holding a previous porter output plus a file the user added."""
    source = write_source(tmp_path / "net.py", MINIMAL_MODEL)
    out = tmp_path / "out"
    assert porter_cli("convert", source, "-o", out, "--input-shape", "4").code == 0
    (out / "notes.txt").write_text("the user's own notes")
    (out / "PORTING.md").write_text("porter's old report, edited")
    return source, out, snapshot(out)


def change_model(source):
    source.write_text(MINIMAL_MODEL.replace("nn.Linear(4, width)", "nn.Linear(4, width * 2)"))


def test_non_empty_out_needs_force(porter_cli, previous):
    source, out, before = previous
    change_model(source)
    assert_clean_error(porter_cli("convert", source, "-o", out), "not empty", "--force")
    assert snapshot(out) == before


def test_force_refuses_a_directory_porter_did_not_write(porter_cli, tmp_path):
    source = write_source(tmp_path / "net.py", MINIMAL_MODEL)
    out = tmp_path / "mine"
    out.mkdir()
    (out / "data.csv").write_text("1,2,3")
    assert_clean_error(porter_cli("convert", source, "-o", out, "--force"), "porter-manifest.json")
    assert snapshot(out) == {"data.csv": b"1,2,3"}


def test_force_replaces_only_listed_files(porter_cli, previous):
    source, out, before = previous
    change_model(source)
    result = porter_cli("convert", source, "-o", out, "--force", "--input-shape", "4")
    assert result.code == 0, result.err
    after = snapshot(out)
    assert after["notes.txt"] == b"the user's own notes"
    assert after["PORTING.md"] != before["PORTING.md"]
    assert b"width * 2" in after["net_keras.py"]
    listed = set(json.loads(after["porter-manifest.json"])["files"])
    assert set(after) == listed | {"notes.txt"}
    assert leftovers(out.parent) == []


def test_force_drops_files_the_new_output_no_longer_has(tmp_path):
    out = tmp_path / "out"
    write_tree(out, {"a.py": "old a", "sub/b.py": "old b", "porter-manifest.json": json.dumps(
        {"files": ["a.py", "sub/b.py", "porter-manifest.json"]})})
    write_tree(out, {"a.py": "new a", "porter-manifest.json": json.dumps({"files": ["a.py", "porter-manifest.json"]})},
               force=True)
    assert sorted(snapshot(out)) == ["a.py", "porter-manifest.json"]
    assert not (out / "sub").exists()


def test_force_never_overwrites_an_unlisted_user_file(tmp_path):
    out = tmp_path / "out"
    write_tree(out, {"a.py": "a", "porter-manifest.json": json.dumps({"files": ["a.py", "porter-manifest.json"]})})
    (out / "train_tpu.py").write_text("the user's own script")
    with pytest.raises(OutputError, match="train_tpu.py"):
        write_tree(out, {"a.py": "a2", "train_tpu.py": "generated", "porter-manifest.json": "{}"}, force=True)
    assert (out / "train_tpu.py").read_text() == "the user's own script"
    assert (out / "a.py").read_text() == "a"


def test_hostile_manifest_cannot_reach_outside_out(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "link").symlink_to(tmp_path)
    (out / "porter-manifest.json").write_text(json.dumps(
        {"files": ["../victim.txt", str(victim), "link/victim.txt", "porter-manifest.json"]}))
    write_tree(out, {"porter-manifest.json": json.dumps({"files": ["porter-manifest.json"]})}, force=True)
    assert victim.read_text() == "keep me"
    assert (out / "link").is_symlink()


def test_output_names_must_stay_inside_out(tmp_path):
    for name in ("../escape.py", "/abs.py", "a/../../b.py", ""):
        with pytest.raises(OutputError):
            write_tree(tmp_path / "out", {name: "x"})
    assert not (tmp_path / "escape.py").exists() and not (tmp_path / "out").exists()


def test_out_that_is_a_file(tmp_path):
    (tmp_path / "out").write_text("mine")
    with pytest.raises(UsageError):
        write_tree(tmp_path / "out", {"a.py": "x"})


def test_unwritable_parent_is_a_clean_error(porter_cli, tmp_path):
    source = write_source(tmp_path / "net.py", MINIMAL_MODEL)
    (tmp_path / "blocker").write_text("a file where a directory should be")
    assert_clean_error(porter_cli("convert", source, "-o", tmp_path / "blocker" / "out"), "cannot write")


class FailingReplace:
    """os.replace that fails (or delivers Ctrl-C) on its `fail_on`-th call, standing for a crash mid-commit."""

    def __init__(self, fail_on, action):
        self.calls, self.fail_on, self.action, self.real = 0, fail_on, action, os.replace

    def __call__(self, source, target):
        self.calls += 1
        if self.calls == self.fail_on:
            self.action()
        return self.real(source, target)


def raise_keyboard_interrupt():
    raise KeyboardInterrupt


def raise_disk_full():
    raise OSError(28, "No space left on device")


def replace_calls(porter_cli, source, out, monkeypatch):
    """How many os.replace calls a --force conversion over (a copy of) `out` makes."""
    probe = out.parent / "probe"
    shutil.copytree(out, probe)
    counting = FailingReplace(None, None)
    monkeypatch.setattr(porter.output.os, "replace", counting)
    assert porter_cli("convert", source, "-o", probe, "--force", "--input-shape", "4").code == 0
    monkeypatch.undo()
    shutil.rmtree(probe)
    return counting.calls


@pytest.mark.parametrize("position", ["first", "second", "middle", "last_but_one", "last"])
@pytest.mark.parametrize("action", [raise_keyboard_interrupt, raise_disk_full])
def test_failure_mid_commit_leaves_the_old_output(porter_cli, previous, monkeypatch, position, action):
    source, out, before = previous
    change_model(source)
    total = replace_calls(porter_cli, source, out, monkeypatch)
    fail_on = {"first": 1, "second": 2, "middle": total // 2, "last_but_one": total - 1, "last": total}[position]
    failing = FailingReplace(fail_on, action)
    monkeypatch.setattr(porter.output.os, "replace", failing)
    result = porter_cli("convert", source, "-o", out, "--force", "--input-shape", "4")
    monkeypatch.undo()
    assert failing.calls >= fail_on, "the failure point was never reached"
    assert result.code == (130 if action is raise_keyboard_interrupt else 2), result.err
    assert "Traceback" not in result.err
    assert snapshot(out) == before
    assert leftovers(out.parent) == []


@pytest.mark.parametrize("fail_on", [1, 4])
def test_ctrl_c_mid_commit_finishes_the_new_output(porter_cli, previous, monkeypatch, fail_on):
    """A real SIGINT during the commit is held until the commit is done: OUT is the complete new output."""
    source, out, _ = previous
    change_model(source)
    failing = FailingReplace(fail_on, lambda: os.kill(os.getpid(), signal.SIGINT))
    monkeypatch.setattr(porter.output.os, "replace", failing)
    result = porter_cli("convert", source, "-o", out, "--force", "--input-shape", "4")
    monkeypatch.undo()
    assert result.code == 130 and "never a mix" in result.err
    after = snapshot(out)
    assert b"width * 2" in after["net_keras.py"] and after["notes.txt"] == b"the user's own notes"
    assert set(after) == set(json.loads(after["porter-manifest.json"])["files"]) | {"notes.txt"}


def test_failure_while_staging_writes_nothing(porter_cli, tmp_path, monkeypatch):
    source = write_source(tmp_path / "net.py", MINIMAL_MODEL)
    out = tmp_path / "out"
    real_write = porter.output.Path.write_text
    calls = []

    def write_text(self, *args, **kwargs):
        calls.append(self)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(porter.output.Path, "write_text", write_text)
    result = porter_cli("convert", source, "-o", out, "--input-shape", "4")
    monkeypatch.undo()
    assert_clean_error(result, "No space left on device")
    assert not out.exists() and leftovers(tmp_path) == []


def test_fresh_output_appears_whole(porter_cli, tmp_path, monkeypatch):
    """Into a new OUT the staged directory is renamed into place: one rename, so never half a tree."""
    source = write_source(tmp_path / "net.py", MINIMAL_MODEL)
    failing = FailingReplace(1, raise_keyboard_interrupt)
    monkeypatch.setattr(porter.output.os, "replace", failing)
    result = porter_cli("convert", source, "-o", tmp_path / "out", "--input-shape", "4")
    monkeypatch.undo()
    assert result.code == 130 and not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_force_never_removes_or_replaces_the_inputs(porter_cli, tmp_path):
    """OUT is the source's own directory and its previous manifest lists the source: the source survives."""
    work = tmp_path / "work"
    work.mkdir()
    source = write_source(work / "model.py", MINIMAL_MODEL)
    (work / "old.txt").write_text("from the previous output")
    (work / "porter-manifest.json").write_text(json.dumps({"files": ["model.py", "old.txt", "porter-manifest.json"]}))
    result = porter_cli("convert", source, "-o", work, "--force", "--input-shape", "4")
    assert result.code == 0, result.err
    assert source.read_text() == MINIMAL_MODEL.lstrip("\n") and not (work / "old.txt").exists()


def test_an_input_named_like_an_output_is_not_overwritten(tmp_path):
    out = tmp_path / "out"
    write_tree(out, {"train_tpu.py": "old", "porter-manifest.json": json.dumps({"files": ["train_tpu.py"]})})
    source = out / "train_tpu.py"
    source.write_text("the user's model source")
    with pytest.raises(OutputError, match="would replace an input"):
        write_tree(out, {"train_tpu.py": "generated", "porter-manifest.json": "{}"}, force=True, keep=[source])
    assert source.read_text() == "the user's model source"
