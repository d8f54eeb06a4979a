"""porter/cli.py: flags, exit codes, and one clean line for every usage error (nothing written)."""

import functools
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from porter.cli import build_parser, parse_init_args, parse_input_specs
from porter.errors import UsageError
from tests.robustness.conftest import MINIMAL_MODEL, assert_clean_error, run_porter, write_source


@pytest.fixture
def porter_cli(capsys):
    return functools.partial(run_porter, capsys)


@pytest.fixture
def model(tmp_path):
    return write_source(tmp_path / "net.py", MINIMAL_MODEL)


def test_converts_with_exit_0(porter_cli, model, tmp_path):
    result = porter_cli("convert", model, "-o", tmp_path / "out", "--input-shape", "4")
    assert result.code == 0, result.err
    manifest = json.loads((tmp_path / "out" / "porter-manifest.json").read_text())
    assert manifest["main_class"] == "Net" and "net_keras.py" in manifest["files"]
    assert "main class Net" in result.out


def test_default_out_is_beside_the_source(porter_cli, model, tmp_path):
    assert porter_cli("convert", model, "--input-shape", "4").code == 0
    assert (tmp_path / "net_keras" / "porter-manifest.json").is_file()


def test_help_documents_every_flag(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["convert", "--help"])
    text = capsys.readouterr().out
    for flag in ("--out", "--class", "--input-shape", "--init-args", "--weights", "--force", "--framework"):
        assert flag in text


@pytest.mark.parametrize("argv, needle", [
    (["--init-args", "{width: 3}"], "not valid JSON"),
    (["--init-args", "[1, 2]"], "must be a JSON object"),
    (["--init-args", '{"wdth": 3}'], "no constructor parameter 'wdth'"),
    (["--init-args", '{"not a name": 3}'], "is not a parameter name"),
    (["--init-args", "[" * 100_000], "not valid JSON"),
    (["--input-shape", "1,x,3"], "positive integers"),
    (["--input-shape", "0,3"], "positive integers"),
    (["--input-shape", "-1"], "positive integers"),
    (["--input-shape", "3:complex128"], "unknown dtype"),
    (["--input-shape", "3:int64:a:b"], "low/high must be numbers"),
    (["--input-shape", "3:int64:9:2"], "must be below high"),
    (["--input-shape", "3:float32:0:inf"], "finite"),
    (["--input-shape", "3:float32:0:1:7"], "SHAPE[:DTYPE[:LOW:HIGH]]"),
    (["--class", "Missing"], "--class Missing"),
    (["--framework", "jax"], "invalid choice: 'jax'"),
    (["--framework", "mxnet"], "--framework mxnet"),
    (["--bogus-flag"], "unrecognized arguments"),
    (["--channels-last-io"], "--channels-last-io: Net takes no channels-first image"),
])
def test_usage_errors(porter_cli, model, tmp_path, argv, needle):
    out = tmp_path / "out"
    result = porter_cli("convert", model, "-o", out, *argv)
    assert_clean_error(result, needle)
    assert not out.exists()


def test_channels_last_io_makes_it_the_main_class_default(porter_cli, tmp_path):
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "lenet.py"
    result = porter_cli("convert", fixture, "-o", tmp_path / "out", "--channels-last-io")
    assert result.code == 0, result.err
    manifest = json.loads((tmp_path / "out" / "porter-manifest.json").read_text())
    assert manifest["channels_last_io"] is True
    entry = next(c for c in manifest["sources"][0]["classes"] if c["name"] == manifest["main_class"])
    assert [spec["channels_last_io"] for spec in entry["example_inputs"]] == [True]
    module = (tmp_path / "out" / "lenet_keras.py").read_text()
    assert "    channels_last_io = True" in module and "x = self.io_input(x)" in module


def test_framework_torch_and_auto_accepted(porter_cli, model, tmp_path):
    for index, framework in enumerate(("torch", "auto")):
        result = porter_cli("convert", model, "-o", tmp_path / f"out{index}", "--framework", framework)
        assert result.code == 0, result.err


def test_init_args_reach_the_manifest(porter_cli, model, tmp_path):
    result = porter_cli("convert", model, "-o", tmp_path / "out", "--init-args", '{"width": 16}')
    assert result.code == 0, result.err
    assert json.loads((tmp_path / "out" / "porter-manifest.json").read_text())["init_args"] == {"width": 16}


def test_init_args_string_that_is_a_keyword(porter_cli, tmp_path):
    """A string argument spelled like a Python keyword (`{"how": "class"}`) is a plain string, not a name to look up
    (it was an internal ParserSyntaxError)."""
    source = write_source(tmp_path / "flag.py", """
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, how="a"):
                super().__init__()
                self.how = how
                self.fc = nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x) * 2 if self.how == "class" else self.fc(x)
        """)
    result = porter_cli("convert", source, "-o", tmp_path / "out", "--input-shape", "4", "--init-args",
                        '{"how": "class"}')
    assert result.code == 0, result.err


def test_init_args_against_kwargs_and_no_init(porter_cli, tmp_path):
    flexible = write_source(tmp_path / "flexible.py", """
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, width=8, **options):
                super().__init__()
                self.fc = nn.Linear(4, width)

            def forward(self, x):
                return self.fc(x)
        """)
    assert porter_cli("convert", flexible, "-o", tmp_path / "a", "--init-args", '{"anything": 1}').code == 0
    bare = write_source(tmp_path / "bare.py", """
        import torch.nn as nn


        class Net(nn.Module):
            def forward(self, x):
                return x
        """)
    assert_clean_error(porter_cli("convert", bare, "-o", tmp_path / "b", "--init-args", '{"width": 1}'),
                       "takes no constructor arguments")


def test_parse_helpers():
    assert parse_init_args(None) == {}
    assert parse_init_args('{"a": [1, 2]}') == {"a": [1, 2]}
    with pytest.raises(UsageError):
        parse_init_args('"text"')
    spec = parse_input_specs(["32:int64:0:64"])[0]
    assert (spec.shape, spec.dtype, spec.low, spec.high) == ([32], "int64", 0, 64)


def test_ops_command(porter_cli):
    result = porter_cli("ops")
    assert result.code == 0 and "Conv2d" in result.out


def test_ops_lists_one_op_per_line(porter_cli):
    """Greppable: `porter ops | grep Conv2d` gives the op and its family, nothing else."""
    lines = porter_cli("ops").out.splitlines()
    assert "conv\ttorch.nn.Conv2d" in lines
    assert all(len(line.split("\t")) == 2 and " " not in line for line in lines), lines[:3]
    families = json.loads(porter_cli("ops", "--format", "json").out)
    assert sum(len(names) for names in families.values()) == len(lines)
    assert "torch.nn.Conv2d" in families["conv"]
    markdown = porter_cli("ops", "--format", "markdown").out
    assert markdown.startswith("| family | torch names |") and "`torch.nn.Conv2d`" in markdown


def test_ops_help_describes_the_command(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["ops", "--help"])
    assert "one 'family<TAB>torch name' line per op" in " ".join(capsys.readouterr().out.split())


def test_closed_pipe_ends_quietly(tmp_path):
    """`porter ops | head -1`: the reader is gone before porter writes; no BrokenPipeError traceback."""
    import os
    import subprocess

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run([sys.executable, "-m", "porter", "ops"], stdout=write_end, stderr=subprocess.PIPE,
                                text=True, cwd=Path(__file__).resolve().parents[1], timeout=120, check=False)
    finally:
        os.close(write_end)
    assert result.stderr == "" and result.returncode == 141, result.stderr


def test_no_command_is_a_usage_error(porter_cli):
    result = porter_cli()
    assert result.code == 2 and "Traceback" not in result.err


def test_console_entry_point_exits_2(tmp_path):
    """The real process: one line on stderr, exit 2, no traceback."""
    import subprocess

    result = subprocess.run([sys.executable, "-m", "porter", "convert", str(tmp_path / "absent.py")],
                            capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1], timeout=120,
                            check=False)
    assert result.returncode == 2
    expected = f"porter: error: {tmp_path / 'absent.py'}: no such file (hint: check the path)"
    assert result.stderr.strip().splitlines() == [expected]


CONV_MODEL = """
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, channels=3):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(channels, 8, 3), nn.ReLU())

        def forward(self, x):
            x = self.features(x)
            return x.mean((2, 3))
    """

EMBEDDING_MODEL = """
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(100, 8)

        def forward(self, tokens, mask=None):
            return self.embed(tokens).mean(1)
    """


@pytest.mark.parametrize("text, specs, needle", [
    (MINIMAL_MODEL, [""], "no sizes given"),
    (MINIMAL_MODEL, ["-1,5"], "size -1 is not positive"),
    (MINIMAL_MODEL, ["4", "4"], "given 2 times, but Net.forward takes 1 tensor argument (x)"),
    (MINIMAL_MODEL, ["2,5"], "first layer Linear(4, ...) takes 4 features (the last size), not 5"),
    (MINIMAL_MODEL, ["4:int64:0:9"], "takes floating-point inputs, not int64"),
    (CONV_MODEL, ["32,32"], "Conv2d(3, ...) takes (channels, height, width) per example (rank 3"),
    (CONV_MODEL, ["1,32,32"], "takes 3 channels (the first size), not 1"),
    (EMBEDDING_MODEL, ["16"], "Embedding(100, ...) takes integer token ids, not float32"),
    (EMBEDDING_MODEL, ["16:int64:0:500"], "token ids must stay below 100"),
    (EMBEDDING_MODEL, ["16:int64", "16:bool", "16"], "takes 1 to 2 tensor arguments (tokens, mask)"),
])
def test_input_specs_the_model_cannot_take(porter_cli, tmp_path, text, specs, needle):
    """Checked against forward's arguments and the first layer: exit 2, one line, nothing written."""
    source = write_source(tmp_path / "net.py", text)
    out = tmp_path / "out"
    argv = [item for spec in specs for item in ("--input-shape", spec)]
    line = assert_clean_error(porter_cli("convert", source, "-o", out, *argv), needle)
    assert "hint:" in line
    assert not out.exists()


@pytest.mark.parametrize("text, argv", [
    (CONV_MODEL, ["--input-shape", "3,16,16"]),
    (CONV_MODEL, ["--input-shape", "1,16,16", "--init-args", '{"channels": 1}']),
    (EMBEDDING_MODEL, ["--input-shape", "16:int64:0:100"]),
    (EMBEDDING_MODEL, ["--input-shape", "16:int64:0:100", "--input-shape", "16:bool"]),
    (MINIMAL_MODEL, ["--input-shape=3,4"]),
])
def test_input_specs_the_model_takes(porter_cli, tmp_path, text, argv):
    source = write_source(tmp_path / "net.py", text)
    result = porter_cli("convert", source, "-o", tmp_path / "out", *argv)
    assert result.code == 0, result.err


def test_ops_missing_lists_what_a_file_uses_that_porter_lacks(tmp_path):
    """`porter ops --missing FILE`: one FILE:LINE<TAB>construct<TAB>reason line per use porter would stub; nothing
    is written; a file porter translates fully says so."""
    source = tmp_path / "net.py"
    source.write_text(textwrap.dedent('''
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                x = torch.special.zeta(self.fc(x), 2.0)
                return torch.special.zeta(x, 3.0)
    '''))
    result = subprocess.run([sys.executable, "-m", "porter.cli", "ops", "--missing", str(source)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split("\t")[:2] for line in lines] == [[f"{source}:12", "torch.special.zeta"],
                                                        [f"{source}:13", "torch.special.zeta"]]
    assert "2 use(s) of 1 construct(s)" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["net.py"]
    clean = subprocess.run([sys.executable, "-m", "porter.cli", "ops", "--missing", str(Path(__file__).resolve().parents[1] / "fixtures" / "lenet.py")],
                           capture_output=True, text=True)
    assert clean.returncode == 0 and clean.stdout == "" and "everything it uses is translated" in clean.stderr


def test_ops_missing_on_a_package_lists_every_model_file(tmp_path):
    """`porter ops --missing DIR/`: the same lines for each model file of the folder (relative imports followed),
    the summary over all of them; nothing is written."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "blocks.py").write_text(textwrap.dedent('''
        import torch
        import torch.nn as nn


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return torch.special.zeta(self.fc(x), 2.0)
    '''))
    (package / "net.py").write_text(textwrap.dedent('''
        import torch.nn as nn

        from .blocks import Block


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                return self.block(x).relu()
    '''))
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    result = subprocess.run([sys.executable, "-m", "porter.cli", "ops", "--missing", str(package)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    lines = [line.split("\t")[:2] for line in result.stdout.splitlines()]
    assert [f"{package / 'blocks.py'}:12", "torch.special.zeta"] in lines
    assert all(construct == "torch.special.zeta" for _, construct in lines)
    assert "construct(s) porter does not translate" in result.stderr
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if "__pycache__" not in p.parts) == before


def test_convert_imports_no_other_command(model, tmp_path):
    """`porter convert` parses its arguments without the other commands' parsers: their modules (verify, diff, data,
    ir) stay unimported, a tenth of a second's start-up; the full parser still lists them."""
    script = ("import sys; from porter.cli import main; code = main(sys.argv[1:]); "
              "print(sorted(m for m in sys.modules if m in ('porter.commands', 'porter.verify.command', "
              "'porter.diff_command', 'porter.data_command', 'porter.ir_command'))); sys.exit(code)")
    result = subprocess.run([sys.executable, "-c", script, "convert", str(model), "-o", str(tmp_path / "out"),
                             "--input-shape", "4"], capture_output=True, text=True, check=False,
                            cwd=Path(__file__).resolve().parents[1])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
    assert {"verify", "diff", "data", "ir"} <= set(build_parser()._subparsers._group_actions[0].choices)
    assert set(build_parser("convert")._subparsers._group_actions[0].choices) == {"convert", "ops"}
