"""porter convert on Gluon fixtures: the port exits 0 and imports, loads the `.params` file real mxnet 1.9.1 wrote
(BatchNorm statistics and affine parameters moved off their defaults) and computes mxnet's outputs within 1e-4
relative to the output scale, eagerly and under XLA."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from porter.weights.gluon_params import read_gluon_params
from tests.mxnet.gluon_fixtures import GLUON_FIXTURES, GLUON_FIXTURES_DIR, GLUON_VARIANTS, make_inputs, needs_mxnet

REPOSITORY = Path(__file__).resolve().parents[2]

# How the port builds the model the fixture's table names (a factory the port carries as the source has it).
# A key "file.py ARGS" converts with those extra command-line arguments.
RESNET_HINT = '{"block": "BasicBlockV1", "layers": [1, 1, 1], "channels": [16, 16, 32, 64]}'
PORT_BUILDERS = {
    "mlp_hybrid.py": lambda module: module.MLP(),
    "lenet.py": lambda module: module.LeNet(),
    "resnet_v1.py": lambda module: module.resnet8_v1(),  # the model-zoo factory, carried into the port
    "mobilenet_v1.py": lambda module: module.MobileNet(),
    "batchnorm_variants.py": lambda module: module.NormVariantsNet(),
    "activations.py": lambda module: module.ActivationZoo(),
    "pooling_variants.py": lambda module: module.PoolingNet(),
    "squeezenet_concurrent.py": lambda module: module.SqueezeNet(),
    "densenet_small.py": lambda module: module.DenseNet(),
    "token_mlp_forward.py": lambda module: module.TokenMLP(),
    "upsampling_decoder.py": lambda module: module.UpsamplingDecoder(),
    "text_rnn_classifier.py": lambda module: module.TextClassifier(),
    "lstm_cell_unroll.py": lambda module: module.CellTagger(),
    "masked_attention.py": lambda module: module.MaskedSelfAttention(),
    f"resnet_v1.py --init-args {RESNET_HINT}": lambda module: module.ResNetV1(module.BasicBlockV1, [1, 1, 1],
                                                                             [16, 16, 32, 64]),
}
# Convnets whose layout the translator follows through the whole model: the traced graph holds at most the
# boundary Transposes (a flatten of (N, C, H, W) after convolutions is the second).
TRANSPOSE_BUDGET = {"lenet.py": 2, "mobilenet_v1.py": 2, "pooling_variants.py": 2, "batchnorm_variants.py": 2,
                    "densenet_small.py": 2, "resnet_v1.py": 2,  # resnet8_v1(): the block class through the factory
                    f"resnet_v1.py --init-args {RESNET_HINT}": 2, "squeezenet_concurrent.py": 2,
                    "upsampling_decoder.py": 2,
                    "token_mlp_forward.py": 4,  # a sequence model: only its own 4 `x.transpose((0, 2, 1))` calls
                    "masked_attention.py": 4,  # attention: only its own 4 transposes of heads and keys
                    "text_rnn_classifier.py": 0, "lstm_cell_unroll.py": 0}  # recurrences read time in place


def convert_fixture(name, out, extra=()):
    """Run `porter convert` as a user does; returns the completed process."""
    return subprocess.run([sys.executable, "-m", "porter", "convert", str(GLUON_FIXTURES_DIR / name), "-o", str(out),
                           *extra], capture_output=True, text=True, cwd=REPOSITORY, check=False)


def import_port(out, name):
    stem = Path(name).stem
    path = Path(out) / f"{stem}_keras.py"
    spec = importlib.util.spec_from_file_location(f"gluon_port_{stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    return tmp_path_factory.mktemp("gluon-ports")


def test_gluon_port_exits_0_imports_and_says_mxnet(ports):
    import json

    completed = convert_fixture("lenet.py", ports / "lenet_only")
    assert completed.returncode == 0, completed.stderr
    manifest = json.loads((ports / "lenet_only" / "porter-manifest.json").read_text())
    assert manifest["sources"][0]["framework"] == "mxnet"
    assert manifest["main_class"] == "LeNet"
    module = import_port(ports / "lenet_only", "lenet.py")
    assert hasattr(module, "LeNet") and hasattr(module, "load_state_dict")
    text = (ports / "lenet_only" / "lenet_keras.py").read_text()
    assert "mxnet" not in text.split('"""', 2)[-1].split("# --- ported from")[0]  # no mxnet import in the port


@needs_mxnet
@pytest.mark.parametrize("key", sorted(PORT_BUILDERS))
def test_port_matches_mxnet(key, ports):
    import tensorflow as tf

    from porter.verify.mxnet_reference import run_gluon_reference

    name, _, extra = key.partition(" ")
    out = ports / f"{Path(name).stem}{'_hinted' if extra else ''}"
    completed = convert_fixture(name, out, extra.split(" ", 1) if extra else ())
    assert completed.returncode == 0, completed.stderr
    case = GLUON_FIXTURES[name]
    inputs = make_inputs(case.inputs)
    params_path = ports / f"{Path(name).stem}.params"
    reference = run_gluon_reference(GLUON_FIXTURES_DIR / name, case.main, inputs, init_kwargs=case.init_kwargs,
                                    perturb=True, save_parameters=params_path)
    expected = reference.outputs[0]
    assert expected.shape == case.output_shape

    module = import_port(out, name)
    model = PORT_BUILDERS[key](module)
    model(*[tf.constant(x) for x in inputs])  # Gluon's deferred shapes (in_units=0): built on a first call
    state = read_gluon_params(params_path)
    assert set(state) == set(reference.parameters)
    module.load_state_dict(model, state)

    scale = float(np.max(np.abs(expected))) or 1.0
    eager = model(*[tf.constant(x) for x in inputs]).numpy()
    assert eager.shape == expected.shape
    eager_error = float(np.max(np.abs(eager - expected))) / scale
    compiled = tf.function(lambda *xs: model(*xs), jit_compile=True)
    xla = compiled(*[tf.constant(x) for x in inputs]).numpy()
    xla_error = float(np.max(np.abs(xla - expected))) / scale
    print(f"{key}: max error relative to the output scale: eager {eager_error:.2e}, XLA {xla_error:.2e}")
    assert eager_error <= 1e-4
    assert xla_error <= 1e-4

    sized_by_weights = PORT_BUILDERS[key](module)  # no sample call: deferred layers take the saved shapes
    module.load_state_dict(sized_by_weights, state)
    direct = sized_by_weights(*[tf.constant(x) for x in inputs]).numpy()
    assert float(np.max(np.abs(direct - expected))) / scale <= 1e-4

    if key in TRANSPOSE_BUDGET:
        specs = [tf.TensorSpec(x.shape, x.dtype) for x in inputs]
        graph = tf.function(lambda *xs: model(*xs), autograph=False).get_concrete_function(*specs).graph
        transposes = [op.type for op in graph.get_operations()].count("Transpose")
        assert transposes <= TRANSPOSE_BUDGET[key], f"{transposes} Transpose ops traced"


@needs_mxnet
def test_convert_with_gluon_params_writes_keras_weights(ports):
    import json

    import tensorflow as tf

    from porter.verify.mxnet_reference import run_gluon_reference

    case = GLUON_FIXTURES["lenet.py"]
    inputs = make_inputs(case.inputs)
    params_path = ports / "lenet-weights.params"
    reference = run_gluon_reference(GLUON_FIXTURES_DIR / "lenet.py", case.main, inputs, perturb=True,
                                    save_parameters=params_path)
    out = ports / "lenet_weights"
    completed = subprocess.run([sys.executable, "-m", "porter", "convert", str(GLUON_FIXTURES_DIR / "lenet.py"),
                                "-o", str(out), "--weights", str(params_path)],
                               capture_output=True, text=True, cwd=REPOSITORY, check=False)
    assert completed.returncode == 0, completed.stderr
    manifest = json.loads((out / "porter-manifest.json").read_text())
    assert set(manifest["weights"]["layout"]) == set(reference.parameters)
    module = import_port(out, "lenet.py")
    model = module.LeNet()
    model(tf.constant(inputs[0]))  # deferred shapes first, then the Keras weights file
    model.load_weights(str(out / manifest["weights"]["file"]))
    actual = model(tf.constant(inputs[0])).numpy()
    expected = reference.outputs[0]
    assert float(np.max(np.abs(actual - expected))) / float(np.max(np.abs(expected))) <= 1e-4


# Variants of GLUON_VARIANTS built through a model-zoo factory (`get_resnet(1, 14, classes=7)`): the port carries
# the factory with its spec tables, and builds the same model from the same call.
FACTORY_VARIANTS = ["resnet_v1.py get_resnet(1, 14)", "mobilenet_v1.py relu6"]


@needs_mxnet
@pytest.mark.parametrize("key", FACTORY_VARIANTS)
def test_factory_variant_matches_mxnet(key, ports):
    import tensorflow as tf

    from porter.verify.mxnet_reference import run_gluon_reference

    name, case = GLUON_VARIANTS[key]
    out = ports / f"{Path(name).stem}_factory"
    completed = convert_fixture(name, out)
    assert completed.returncode == 0, completed.stderr
    inputs = make_inputs(case.inputs)
    params_path = ports / f"{Path(name).stem}_factory.params"
    reference = run_gluon_reference(GLUON_FIXTURES_DIR / name, case.main, inputs, init_kwargs=case.init_kwargs,
                                    perturb=True, save_parameters=params_path)
    expected = reference.outputs[0]
    assert expected.shape == case.output_shape
    module = import_port(out, name)
    model = getattr(module, case.main)(**case.init_kwargs)  # the source's factory, called as mxnet's was
    model(*[tf.constant(x) for x in inputs])
    state = read_gluon_params(params_path)
    assert set(state) == set(reference.parameters)
    module.load_state_dict(model, state)
    scale = float(np.max(np.abs(expected))) or 1.0
    eager = float(np.max(np.abs(model(*[tf.constant(x) for x in inputs]).numpy() - expected))) / scale
    compiled = tf.function(lambda *xs: model(*xs), jit_compile=True)
    xla = float(np.max(np.abs(compiled(*[tf.constant(x) for x in inputs]).numpy() - expected))) / scale
    print(f"{key}: max error relative to the output scale: eager {eager:.2e}, XLA {xla:.2e}")
    assert eager <= 1e-4
    assert xla <= 1e-4
