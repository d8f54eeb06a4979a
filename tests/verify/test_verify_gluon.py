"""`porter verify` and the generated test_equivalence.py on Gluon ports, against real mxnet 1.9.1 (no stand-ins)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mxnet.gluon_fixtures import GLUON_FIXTURES_DIR, needs_mxnet

pytestmark = needs_mxnet

REPOSITORY = Path(__file__).resolve().parents[2]
MXNET_PYTHON = REPOSITORY / ".venv-mxnet" / "bin" / "python"

# fixture -> porter convert arguments (the manifest needs example inputs; mobilenet_v1.py's first class is RELU6)
CONVERT_ARGUMENTS = {
    "lenet": ["--input-shape", "1,28,28"],
    "mlp_hybrid": ["--input-shape", "1,28,28"],
    "mobilenet_v1": ["--input-shape", "3,32,32", "--class", "MobileNet"],
    "batchnorm_variants": ["--input-shape", "3,16,16"],
}
# The port's BatchNorm moves running_var by the unbiased batch variance (torch's rule); mxnet 1.9.1 uses the biased
# one, so one training step differs by a factor n/(n-1) in the statistics' update (porter/runtime, not verify).


@pytest.fixture(scope="module")
def gluon_ports(tmp_path_factory):
    """Convert each fixture once: name -> OUT."""
    root = tmp_path_factory.mktemp("gluon-verify")
    ports = {}
    for name, arguments in CONVERT_ARGUMENTS.items():
        out = root / name
        completed = subprocess.run([sys.executable, "-m", "porter", "convert", str(GLUON_FIXTURES_DIR / f"{name}.py"),
                                    "-o", str(out), *arguments], capture_output=True, text=True, cwd=REPOSITORY,
                                   check=False)
        assert completed.returncode == 0, completed.stderr
        ports[name] = out
    return ports


@pytest.mark.parametrize("name", sorted(CONVERT_ARGUMENTS))
def test_verify_gluon_port_is_equal(name, gluon_ports, porter_cli):
    result = porter_cli("verify", gluon_ports[name], "--examples", "8")
    print(result.out)
    assert "(mxnet)" in result.out and "reference: mxnet 1.9.1" in result.out
    assert result.code == 0, result.out + result.err
    assert "porter verify: equal" in result.out
    # the cases went to mxnet together; a gradient beyond float32's tolerance on this machine's numerics is judged
    # against mxnet in float64, one process more (explained as round-off, the verdict still "equal")
    assert "2 mxnet process(es)" in result.out or (
        "3 mxnet process(es)" in result.out and "against mxnet in float64" in result.out), result.out


def test_mutated_port_names_what_differs(gluon_ports, porter_cli, tmp_path):
    import shutil

    out = tmp_path / "lenet_mutated"
    shutil.copytree(gluon_ports["lenet"], out)
    module = out / "lenet_keras.py"
    text = module.read_text()
    mutated = text.replace('GluonConv2D(channels=16, kernel_size=3, activation="relu")',
                           'GluonConv2D(channels=16, kernel_size=3, activation="tanh")')
    assert mutated != text
    module.write_text(mutated)
    result = porter_cli("verify", out, "--examples", "3")
    assert result.code == 1, result.out + result.err
    assert "MISMATCH in LeNet: forward" in result.out
    assert "output: max abs error" in result.out
    # the block whose output differs while its input matches: the second convolution, by its save_parameters path
    assert "first diverging submodule: features.2 (Conv2D) at " in result.out
    assert "lenet.py:14" in result.out
    assert "reproduce: porter verify" in result.out and "--case batch=2,exponent=0,variant=0,seed=0" in result.out


def test_changed_epsilon_is_found_in_its_batchnorm(gluon_ports, porter_cli, tmp_path):
    import shutil

    out = tmp_path / "batchnorm_mutated"
    shutil.copytree(gluon_ports["batchnorm_variants"], out)
    module = out / "batchnorm_variants_keras.py"
    text = module.read_text()
    mutated = text.replace("GluonBatchNorm(center=False, momentum=0.8, epsilon=1e-3)",
                           "GluonBatchNorm(center=False, momentum=0.8, epsilon=1e-5)")
    assert mutated != text
    module.write_text(mutated)
    result = porter_cli("verify", out, "--examples", "2")
    assert result.code == 1, result.out + result.err
    # eval-mode outputs move by ~3e-5 of their scale; a training step's by ~8e-2: caught there
    assert "MISMATCH in NormVariantsNet: train: output 0 in training mode" in result.out
    assert "first diverging submodule: bn2 (BatchNorm) at " in result.out
    assert "batchnorm_variants.py:17 `self.bn2 = nn.BatchNorm(" in result.out


def test_missing_mxnet_interpreter_is_a_usage_error(gluon_ports, porter_cli, tmp_path):
    result = porter_cli("verify", gluon_ports["lenet"], "--mxnet-python", tmp_path / "no-such-python")
    assert result.code == 2
    lines = [line for line in result.err.splitlines() if line.startswith("porter: error")]
    assert len(lines) == 1 and "bash scripts/setup.sh" in lines[0], result.err


def test_generated_test_equivalence_passes_for_lenet(gluon_ports):
    out = gluon_ports["lenet"]
    test_file = out / "test_equivalence.py"
    imports = [line.split()[1] for line in test_file.read_text().splitlines() if line.startswith(("import ", "from "))]
    assert not [module for module in imports if module.split(".")[0] in ("torch", "porter")]
    environment = {**os.environ, "PORTER_MXNET_PYTHON": str(MXNET_PYTHON), "PORTER_EXAMPLES": "5",
                   "TF_CPP_MIN_LOG_LEVEL": "3"}
    environment.pop("PYTHONPATH", None)
    completed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
                                "test_equivalence.py"], capture_output=True, text=True, cwd=out, env=environment,
                               check=False)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert "3 passed" in completed.stdout  # baseline, drawn forward and gradients (no BatchNorm: train skipped)

    del environment["PORTER_MXNET_PYTHON"]  # OUT lies outside the repository: no .venv-mxnet above it
    completed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
                                "test_equivalence.py"], capture_output=True, text=True, cwd=out, env=environment,
                               check=False)
    assert completed.returncode == 0, completed.stdout[-3000:]
    assert "skipped" in completed.stdout and "PORTER_MXNET_PYTHON" in completed.stdout
