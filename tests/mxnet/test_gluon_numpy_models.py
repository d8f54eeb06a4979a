"""Gluon 2 models in NumPy mode (tests/mxnet/models/numpy_mode_models.py: d2l chapter idioms outside its library
file) converted in one call and compared with real mxnet 1.9.1: each Block is built in mxnet, called, its parameters
moved off their defaults (BatchNorm statistics included) and saved with `save_parameters` (the NumPy-mode .params
file), and the port loads that file and must match within 1e-4 of the output's scale, eagerly and under XLA.
Transposes: convnets at most 2 (images in and out), the rest only the source's own `X.T`/`swapaxes`."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.mxnet.gluon_fixtures import needs_mxnet
from tests.mxnet.numpy_mode_support import assert_matches_mxnet, convert_with_reference, model_inputs

pytestmark = needs_mxnet
SOURCE = Path(__file__).resolve().parent / "models" / "numpy_mode_models.py"
# class -> (constructor args, inputs(rng), most Transposes)
MODELS = {
    "DenseBlock": ((2, 4), lambda r: [r.standard_normal((2, 3, 8, 8))], 2),
    "Inception": ((2, (2, 4), (2, 3), 3), lambda r: [r.standard_normal((2, 3, 8, 8))], 2),
    "Seq2SeqDecoder": ((11, 6, 8, 2), lambda r: [r.integers(0, 11, (2, 5)), r.standard_normal((4, 2, 8)),
                                                 r.standard_normal((2, 2, 8))], 2),
    "SEBlock": ((8,), lambda r: [r.standard_normal((2, 8, 5, 5))], 0),
    "BatchNormScratchLike": ((3,), lambda r: [r.standard_normal((2, 3, 5, 5))], 0),
    "MLPHead": ((16, 3), lambda r: [r.standard_normal((2, 2, 7))], 0),
    "HybridNumpy": ((), lambda r: [r.standard_normal((3, 5))], 0),
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """(the port's module, the folder of mxnet's outputs and .params files): mxnet runs while porter converts."""
    folder = tmp_path_factory.mktemp("numpy_mode_models")
    conversion, module = convert_with_reference(SOURCE, folder, folder / "out",
                                                {n: list(m[0]) for n, m in MODELS.items()},
                                                {n: model_inputs(m[1]) for n, m in MODELS.items()})
    assert conversion.exit_code == 0
    return module, folder


@pytest.mark.parametrize("name", sorted(MODELS))
def test_numpy_mode_model_matches_mxnet(ported, name):
    module, folder = ported
    port = getattr(module, name)(*MODELS[name][0])
    assert_matches_mxnet(port, module, model_inputs(MODELS[name][1]), folder, name, MODELS[name][2])


def test_porter_verify_runs_a_numpy_mode_source(tmp_path):
    """`porter verify` builds the source in mxnet with its own inputs and perturbed weights: for a file that switches
    NumPy mode on, the driver hands the Blocks mxnet.np arrays and zeroes gradients without the legacy operator
    mxnet 1.9.1's Parameter.zero_grad calls (it raises on NumPy-mode arrays)."""
    repository = Path(__file__).resolve().parents[2]
    out = tmp_path / "se"
    converted = subprocess.run([sys.executable, "-m", "porter", "convert", str(SOURCE), "-o", str(out), "--class",
                                "SEBlock", "--input-shape", "8,6,6", "--init-args", '{"channels": 8}'],
                               capture_output=True, text=True, cwd=repository, check=False)
    assert converted.returncode == 0, converted.stderr
    verified = subprocess.run([sys.executable, "-m", "porter", "verify", str(out), "--examples", "2"],
                              capture_output=True, text=True, cwd=repository, check=False)
    assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr[-2000:]
    assert "equal" in verified.stdout
