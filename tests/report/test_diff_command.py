"""`porter diff SRC -o OUT`: exit 0 and silence when nothing changed, exit 1 and exactly the changed lines otherwise."""

import json
import shutil

import pytest

from porter.cli import main
from porter.output import listed_files
from tests.report.helpers import ROOT


@pytest.fixture
def project(tmp_path):
    source = tmp_path / "lenet.py"
    shutil.copy(ROOT / "fixtures" / "lenet.py", source)
    out = tmp_path / "lenet_keras"
    assert main(["convert", str(source), "-o", str(out)]) == 0
    return source, out


def _line(out, needle):
    """The line of the generated model module holding `needle` (as on disk)."""
    return next(line for line in (out / "lenet_keras.py").read_text().splitlines() if needle in line)


def _snapshot(out):
    return {p.relative_to(out).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(out.rglob("*"))}


def test_unchanged_source_gives_exit_0_and_no_output(project, capsys):
    source, out = project
    capsys.readouterr()
    assert main(["diff", str(source), "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""


def test_changing_one_layer_shows_exactly_the_changed_lines(project, capsys):
    source, out = project
    before = _snapshot(out)
    source.write_text(source.read_text().replace("nn.Conv2d(6, 16, kernel_size=5)", "nn.Conv2d(6, 16, kernel_size=3)"))
    capsys.readouterr()
    assert main(["diff", str(source), "-o", str(out)]) == 1
    diff = capsys.readouterr().out
    assert "\033[" not in diff  # not a terminal: no colour
    module = diff.split("--- a/PORTING.md")[0]
    assert module.startswith("--- a/lenet_keras.py\n+++ b/lenet_keras.py\n@@ ")
    changed = [line for line in module.splitlines() if line[:1] in "+-" and not line.startswith(("---", "+++"))]
    old = _line(out, "self.conv2 = ")
    assert changed == ["-" + old, "+" + old.replace("kernel_size=5", "kernel_size=3")]
    assert "--- a/porter-manifest.json" not in diff  # nothing in the manifest depends on the layer
    assert _snapshot(out) == before  # never writes


def test_the_diff_applies_with_patch(project, capsys, tmp_path):
    source, out = project
    source.write_text(source.read_text().replace("nn.Linear(120, 84)", "nn.Linear(120, 64)").replace(
        "nn.Linear(84, num_classes)", "nn.Linear(64, num_classes)"))
    capsys.readouterr()
    assert main(["diff", str(source), "-o", str(out)]) == 1
    diff = capsys.readouterr().out
    patch = shutil.which("patch")
    if patch is None:
        pytest.skip("no patch(1)")
    import subprocess

    subprocess.run([patch, "-p1", "-s", "-d", str(out)], input=diff, text=True, check=True)
    capsys.readouterr()
    assert main(["diff", str(source), "-o", str(out)]) == 0


def test_side_by_side_and_colour(project, capsys):
    source, out = project
    source.write_text(source.read_text().replace("nn.Linear(84, num_classes)", "nn.Linear(84, num_classes, bias=False)"))
    capsys.readouterr()
    assert main(["diff", str(source), "-o", str(out), "--side-by-side", "--width", "200"]) == 1
    text = capsys.readouterr().out
    old = _line(out, "self.fc3 = ")
    new = old.replace("num_classes)", "num_classes, bias=False)")
    row = next(line for line in text.splitlines() if old.strip() in line)
    left, right = row.split(" | ", 1)
    assert "bias=False" not in left and new.strip() in right
    assert main(["diff", str(source), "-o", str(out), "--color", "always"]) == 1
    coloured = capsys.readouterr().out
    assert f"\033[31m-{old}\033[0m" in coloured
    assert f"\033[32m+{new}\033[0m" in coloured


def test_recorded_options_are_reused(tmp_path, capsys):
    source = tmp_path / "mlp.py"
    shutil.copy(ROOT / "fixtures" / "mlp.py", source)
    out = tmp_path / "out"
    assert main(["convert", str(source), "-o", str(out), "--input-shape", "784", "--init-args",
                 '{"hidden_dims": [32]}']) == 0
    capsys.readouterr()
    assert main(["diff", str(source), "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""


def test_user_files_and_binary_outputs_are_left_out(project, capsys):
    source, out = project
    (out / "notes.txt").write_text("mine\n")
    weights = "lenet.weights.h5"
    (out / weights).write_bytes(b"\x89HDF\r\n\x1a\n\x00\xff")
    manifest = json.loads((out / "porter-manifest.json").read_text())
    manifest["files"] = listed_files([*manifest["files"], weights])  # an older porter's output: no weights record
    (out / "porter-manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    capsys.readouterr()
    assert main(["diff", str(source), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "porter cannot tell whether" in captured.err and captured.err.count("\n") == 1, captured.err


def test_a_removed_output_file_shows_as_added(project, capsys):
    source, out = project
    (out / "PORTING.md").unlink()
    capsys.readouterr()
    assert main(["diff", str(source), "-o", str(out)]) == 1
    assert "--- /dev/null\n+++ b/PORTING.md\n" in capsys.readouterr().out


@pytest.mark.parametrize("arguments, message", [
    (["diff", "{source}", "-o", "{empty}"], "holds no porter-manifest.json"),
    (["diff", "{missing}", "-o", "{out}"], "no such file"),
    (["diff", "{source}", "-o", "{out}", "--context", "-1"], "--context"),
    (["diff", "{source}", "-o", "{out}", "--input-shape", "a,b"], "--input-shape"),
])
def test_usage_errors_exit_2(project, tmp_path, capsys, arguments, message):
    source, out = project
    (tmp_path / "empty").mkdir()
    values = {"source": source, "out": out, "empty": tmp_path / "empty", "missing": tmp_path / "missing.py"}
    assert main([a.format(**values) for a in arguments]) == 2
    assert message in capsys.readouterr().err


def test_bad_option_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["diff"])
    assert exit_info.value.code == 2
