"""Gluon 2 models in NumPy mode (tests/mxnet/models/numpy_mode_models.py: d2l chapter idioms outside its library
file) converted in one call and compared with real mxnet 1.9.1: each Block is built in mxnet, called, its parameters
moved off their defaults (BatchNorm statistics included) and saved with `save_parameters` (the NumPy-mode .params
file), and the port loads that file and must match within 1e-4 of the output's scale, eagerly and under XLA.
Transposes: convnets at most 2 (images in and out), the rest only the source's own `X.T`/`swapaxes`."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.compare import assert_equivalent
from porter.verify.harness import count_transposes
from porter.weights.gluon_params import read_gluon_params
from tests.mxnet.gluon_fixtures import needs_mxnet

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
REFERENCE = r'''
import importlib.util, json, sys
import numpy as onp
import mxnet as mx
from mxnet import np
_spec = importlib.util.spec_from_file_location("numpy_mode_reference", sys.argv[1])
source = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(source)
request = json.loads(open(sys.argv[2]).read())
folder = request["folder"]


def flat(result):
    return [y for item in result for y in flat(item)] if isinstance(result, (list, tuple)) else [result.asnumpy()]


for name, args in request["models"].items():
    mx.random.seed(0)
    model = getattr(source, name)(*[tuple(a) if isinstance(a, list) else a for a in args])
    model.initialize()
    arrays = onp.load(f"{folder}/{name}_in.npz")
    inputs = [np.array(arrays[f"arr_{i}"], dtype=arrays[f"arr_{i}"].dtype) for i in range(len(arrays.files))]
    model(*inputs)
    generator = onp.random.RandomState(0)
    for key, parameter in sorted(model.collect_params().items()):
        value = generator.rand(*parameter.shape) + 0.5 if key.endswith("var") else \
            generator.standard_normal(parameter.shape) * 0.5
        parameter.set_data(np.array(value.astype(onp.float32)))
    model.save_parameters(f"{folder}/{name}.params")
    onp.savez(f"{folder}/{name}_out.npz", *flat(model(*inputs)))
'''


def _inputs(name):
    return [i.astype(np.float32) if i.dtype.kind == "f" else i.astype(np.int32)
            for i in MODELS[name][1](np.random.default_rng(0))]


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """(the port's module, the folder of mxnet's outputs and .params files): mxnet runs while porter converts."""
    from porter.verify.mxnet_reference import mxnet_python

    folder = tmp_path_factory.mktemp("numpy_mode_models")
    for name in MODELS:
        np.savez(folder / f"{name}_in.npz", *_inputs(name))
    (folder / "request.json").write_text(json.dumps({"folder": str(folder),
                                                     "models": {n: list(m[0]) for n, m in MODELS.items()}}))
    (folder / "reference.py").write_text(REFERENCE)
    process = subprocess.Popen([str(mxnet_python()), str(folder / "reference.py"), str(SOURCE),
                                str(folder / "request.json")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    try:
        conversion = convert(ConvertOptions(SOURCE, folder / "out"))
        write_tree(folder / "out", conversion.files)
        spec = importlib.util.spec_from_file_location("numpy_mode_port", folder / "out" / "numpy_mode_models_keras.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["numpy_mode_port"] = module
        spec.loader.exec_module(module)
    finally:
        _, errors = process.communicate(timeout=600)
    assert process.returncode == 0, errors[-3000:]
    assert conversion.exit_code == 0
    return module, folder


def _flat(result):
    return [y for item in result for y in _flat(item)] if isinstance(result, (list, tuple)) else [np.asarray(result)]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_numpy_mode_model_matches_mxnet(ported, name):
    import tensorflow as tf

    module, folder = ported
    inputs = _inputs(name)
    with np.load(folder / f"{name}_out.npz") as archive:
        expected = [archive[f"arr_{i}"] for i in range(len(archive.files))]
    port = getattr(module, name)(*MODELS[name][0])
    port(*inputs)
    module.load_state_dict(port, read_gluon_params(folder / f"{name}.params"))
    eager = _flat(port(*inputs, training=False))
    xla = _flat(tf.function(lambda *a: port(*a, training=False), jit_compile=True)(*[tf.constant(i) for i in inputs]))
    assert len(eager) == len(xla) == len(expected)
    for want, got, compiled in zip(expected, eager, xla, strict=True):
        assert want.shape == got.shape == compiled.shape
        assert_equivalent(want, got, tolerance=1e-4, what=name)
        assert_equivalent(want, compiled, tolerance=1e-4, what=f"{name} (XLA)")
    transposes = count_transposes(port, inputs)
    print(f"{name}: {transposes} Transposes")
    assert transposes <= MODELS[name][2]


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
