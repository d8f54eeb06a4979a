"""`porter verify`: usage errors exit 2 with one line, a faithful port exits 0 with a table per class."""

import json
import textwrap

import pytest

from porter.cli import main

TINY = textwrap.dedent('''
    import torch.nn as nn
    import torch.nn.functional as F


    class Tiny(nn.Module):
        def __init__(self, width=4):
            super().__init__()
            self.conv = nn.Conv2d(3, width, 3, padding=1)
            self.bn = nn.BatchNorm2d(width)

        def forward(self, x):
            return F.relu(self.bn(self.conv(x))).mean(dim=(2, 3))
''')


def convert_tiny(directory, *extra):
    source = directory / "tiny.py"
    source.write_text(TINY)
    out = directory / "out"
    assert main(["convert", str(source), "-o", str(out), *extra]) == 0
    return out


@pytest.fixture(scope="module")
def tiny_out(tmp_path_factory):
    return convert_tiny(tmp_path_factory.mktemp("tiny"), "--input-shape", "3,16,16", "--init-args", '{"width": 6}')


def assert_usage_error(result, *needles):
    assert result.code == 2, (result.code, result.out, result.err)
    errors = [line for line in result.err.splitlines() if line.startswith("porter: error: ")]
    assert len(errors) == 1 and "Traceback" not in result.err, result.err
    for needle in needles:
        assert needle in errors[0], errors[0]


def test_help_documents_every_flag(porter_cli):
    result = porter_cli("verify", "--help")
    assert result.code == 0
    for flag in ("--examples", "--seed", "--class", "--precision", "mixed_bfloat16", "--case", "--mxnet-python",
                 "PORTER_SOURCE", "Exit 0"):
        assert flag in result.out


def test_missing_output_directory(porter_cli, tmp_path):
    assert_usage_error(porter_cli("verify", tmp_path / "nowhere"), "not a directory")
    assert_usage_error(porter_cli("verify", tmp_path), "no porter-manifest.json")


def test_without_example_inputs_verify_asks_for_input_shape(porter_cli, tmp_path):
    out = convert_tiny(tmp_path)
    assert_usage_error(porter_cli("verify", out), "no class", "example inputs", "--input-shape")
    assert_usage_error(porter_cli("verify", out, "--class", "Tiny"), "Tiny has no example inputs", "--input-shape")


def test_bad_flags(porter_cli, tiny_out):
    assert_usage_error(porter_cli("verify", tiny_out, "--class", "Nope"), "--class Nope", "Tiny")
    assert_usage_error(porter_cli("verify", tiny_out, "--examples", "0"), "--examples")
    assert_usage_error(porter_cli("verify", tiny_out, "--case", "size=3"), "--case")
    assert porter_cli("verify", tiny_out, "--precision", "float16").code == 2


def test_mxnet_sources_are_a_later_issue(porter_cli, tiny_out, tmp_path):
    manifest = json.loads((tiny_out / "porter-manifest.json").read_text())
    manifest["sources"][0]["framework"] = "mxnet"
    copy = tmp_path / "mx"
    copy.mkdir()
    (copy / "porter-manifest.json").write_text(json.dumps(manifest))
    assert_usage_error(porter_cli("verify", copy, "--mxnet-python", "/opt/mx/bin/python"), "MXNet")


def test_missing_source_points_at_porter_source(porter_cli, tiny_out, monkeypatch, tmp_path):
    monkeypatch.setenv("PORTER_SOURCE", str(tmp_path / "gone.py"))
    assert_usage_error(porter_cli("verify", tiny_out), "does not exist", "PORTER_SOURCE")


def test_faithful_port_is_equal(porter_cli, tiny_out):
    result = porter_cli("verify", tiny_out, "--examples", "4", "--seed", "3")
    assert result.code == 0, result.out + result.err
    header, *rows = [line for line in result.out.splitlines() if line.startswith(("class ", "Tiny "))]
    for column in ("examples", "max abs err", "max rel err", "grad err", "train err", "verdict"):
        assert column in header
    assert rows[0].split()[:2] == ["Tiny", "4"] and "equal" in rows[0]
    assert "input sizes drawn from 0: 3x16x16; 1: 3x8x8; 2: 3x12x12; 3: 3x20x20" in result.out
    assert "porter verify: equal" in result.out
    porting = (tiny_out / "PORTING.md").read_text()
    if "porter:equivalence:begin" in porting:
        assert "| `Tiny` | pass | 4 |" in porting and str(tiny_out) not in porting


def test_one_case_reruns_alone(porter_cli, tiny_out):
    result = porter_cli("verify", tiny_out, "--case", "batch=3,exponent=-1.5,variant=2,seed=9")
    assert result.code == 0, result.out
    assert "1 example(s) per class" in result.out


def test_bf16_reports_cosine_and_argmax(porter_cli, tiny_out):
    result = porter_cli("verify", tiny_out, "--examples", "3", "--precision", "mixed_bfloat16")
    assert result.code == 0, result.out
    assert "min cosine" in result.out and "argmax agree" in result.out


def test_inputs_the_torch_model_rejects_are_a_usage_error(porter_cli, tmp_path):
    """A spec the source itself cannot run is the spec's fault, not a port mismatch: exit 2, one line naming the
    spec and the torch error's first line."""
    source = tmp_path / "flat.py"
    source.write_text(textwrap.dedent('''
        import torch.nn as nn


        class Flat(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(12, 2)

            def forward(self, x):
                return self.fc(x.flatten(1))
    '''))
    out = tmp_path / "out"
    assert main(["convert", str(source), "-o", str(out), "--input-shape", "3,5"]) == 0
    result = porter_cli("verify", out, "--examples", "2")
    assert_usage_error(result, "porter-manifest.json", "(--input-shape 3,5) do not fit the torch model",
                       "RuntimeError: mat1 and mat2 shapes cannot be multiplied", "hint:")
    assert "MISMATCH" not in result.out + result.err


ZIPPED_LAYERS = '''
    import torch.nn as nn


    class Layers(nn.Module):
        def __init__(self, c, n=3):
            super().__init__()
            self.convs = nn.ModuleList([nn.Conv1d(c, c, 3, padding=1) for _ in range(n)])
            self.norms = nn.ModuleList()
            for _ in range(n):
                self.norms.append(nn.BatchNorm1d(c))
            self.act = nn.GELU()

        def forward(self, x):
            for conv, norm in zip(self.convs, self.norms):
                x = self.act(norm(conv(x))).sigmoid()
            return x
'''


def test_constructor_arguments_porter_was_not_given_are_a_usage_error(porter_cli, tmp_path):
    source = tmp_path / "layers.py"
    source.write_text(textwrap.dedent(ZIPPED_LAYERS))
    out = tmp_path / "out"
    assert main(["convert", str(source), "-o", str(out), "--input-shape", "4,10"]) == 0
    result = porter_cli("verify", out, "--examples", "2")
    assert_usage_error(result, "porter-manifest.json", "Layers cannot be built without constructor arguments",
                       "--init-args")
    assert "MISMATCH" not in result.out + result.err


def test_layers_zipped_from_two_containers_are_translated(porter_cli, tmp_path):
    """`for conv, norm in zip(self.convs, self.norms)` binds one layer of each list: both run channels-last and the
    tensor method on their result is a tensor op."""
    source = tmp_path / "layers.py"
    source.write_text(textwrap.dedent(ZIPPED_LAYERS))
    out = tmp_path / "out"
    assert main(["convert", str(source), "-o", str(out), "--input-shape", "4,10", "--init-args", '{"c": 4}']) == 0
    assert ".sigmoid()" not in (out / "layers_keras.py").read_text()
    result = porter_cli("verify", out, "--examples", "3")
    assert result.code == 0, result.out + result.err


def test_long_steps_show_progress_on_stderr(porter_cli, tiny_out):
    """The imports and each class take seconds: stderr says what is happening; stdout keeps the report."""
    result = porter_cli("verify", tiny_out, "--examples", "2")
    assert result.code == 0, result.out + result.err
    lines = result.err.splitlines()
    assert lines[0] == "porter verify: loading torch and TensorFlow..."
    assert any(line.startswith("porter verify: checking ") and line.endswith("(1/1)...") for line in lines)
    assert "loading torch" not in result.out


def test_unet_fixture_verifies_equal_in_training_mode(porter_cli, tmp_path):
    """UNet's decoder BatchNorms at a few values per channel: the training-mode gradients agree with torch (the
    fused training kernel's oneDNN gradient did not, by up to 1.5% of a tensor's max)."""
    from pathlib import Path

    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "unet.py"
    assert main(["convert", str(fixture), "-o", str(tmp_path / "unet")]) == 0
    result = porter_cli("verify", tmp_path / "unet", "--examples", "6")
    assert result.code == 0, result.out + result.err
