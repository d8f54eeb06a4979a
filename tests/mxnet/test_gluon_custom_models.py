"""porter convert on small Gluon models of tests/mxnet/models/ written in other styles than the fixtures (Gluon 2
`forward` reading `self.weight.data()`, `gluon.Parameter`, hybrid_forward parameters in another order with
defaults, model-zoo factories, GluonCV's idioms in zoo_cells.py): the port loads the `.params` file real mxnet 1.9.1 wrote and computes mxnet's
outputs within 1e-4 relative to the output scale, eagerly and under XLA."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from porter.weights.gluon_params import read_gluon_params
from tests.mxnet.gluon_fixtures import GluonCase, f32, integers, make_inputs, needs_mxnet
from tests.mxnet.test_gluon_convert import import_port

REPOSITORY = Path(__file__).resolve().parents[2]
MODELS = Path(__file__).resolve().parent / "models"

# key -> (model file, how mxnet builds it, how the port builds it)
CASES = {
    "gated_projection": ("gated_projection.py", GluonCase("GatedProjection", [f32(5, 3, 4)], (5, 3)),
                         lambda module: module.GatedProjection()),
    "gated_projection batch 1": ("gated_projection.py", GluonCase(
        "GatedProjection", [f32(1, 2, 5)], (1, 3), {"in_units": 10, "units": 4}),
        lambda module: module.GatedProjection(in_units=10, units=4)),
    "pooled_attention": ("pooled_attention.py", GluonCase(
        "PooledAttention", [f32(3, 7, 6), integers(3, low=1, high=8, dtype="float32")], (3, 6, 5)),
        lambda module: module.PooledAttention()),
    "pooled_attention batch 1": ("pooled_attention.py", GluonCase(
        "PooledAttention", [f32(1, 4, 3), integers(1, low=1, high=5, dtype="float32")], (1, 4, 2),
        {"units": 3, "hidden": 2, "heads": 2}),
        lambda module: module.PooledAttention(units=3, hidden=2, heads=2)),
    "zoo_vgg vgg3()": ("zoo_vgg.py", GluonCase("vgg3", [f32(2, 3, 16, 16)], (2, 10)), lambda module: module.vgg3()),
    "zoo_vgg vgg5_bn(classes=4) batch 1": ("zoo_vgg.py", GluonCase(
        "vgg5_bn", [f32(1, 3, 12, 12)], (1, 4), {"classes": 4}), lambda module: module.vgg5_bn(classes=4)),
    "zoo_resnet resnet10_v1()": ("zoo_resnet.py", GluonCase("resnet10_v1", [f32(2, 3, 16, 16)], (2, 10)),
                                 lambda module: module.resnet10_v1()),
    "zoo_resnet resnet11_v1(classes=3) bottleneck": ("zoo_resnet.py", GluonCase(
        "resnet11_v1", [f32(2, 3, 16, 16)], (2, 3), {"classes": 3}), lambda module: module.resnet11_v1(classes=3)),
    "zoo_resnet resnet10_v2(classes=5) batch 1": ("zoo_resnet.py", GluonCase(
        "resnet10_v2", [f32(1, 3, 20, 20)], (1, 5), {"classes": 5}), lambda module: module.resnet10_v2(classes=5)),
    "zoo_resnet get_resnet(2, 10)": ("zoo_resnet.py", GluonCase(
        "get_resnet", [f32(3, 3, 16, 16)], (3, 10), {"version": 2, "num_layers": 10}),
        lambda module: module.get_resnet(2, 10)),
    "zoo_cells cellnet8(classes=5)": ("zoo_cells.py", GluonCase(
        "cellnet8", [f32(2, 3, 16, 16)], (2, 5), {"classes": 5}), lambda module: module.cellnet8(classes=5)),
    "zoo_cells get_cellnet(6, acts=...) batch 1": ("zoo_cells.py", GluonCase(
        "get_cellnet", [f32(1, 3, 12, 12)], (1, 10), {"channels": 6, "acts": ["hard_swish", "relu"]}),
        lambda module: module.get_cellnet(channels=6, acts=["hard_swish", "relu"])),
    "axis_ops": ("axis_ops.py", GluonCase("AxisOps", [f32(2, 3, 7, 6), f32(2, 3, 5)], (2, 5, 3, 4)),
                 lambda module: module.AxisOps()),
}
# Convnets built through factories: no Transpose but the one at the boundary (and a Flatten's, if any).
TRANSPOSE_BUDGET = {key: 2 for key in CASES if key.startswith("zoo_")}


def flat_outputs(result):
    if isinstance(result, (tuple, list)):
        return [array for item in result for array in flat_outputs(item)]
    return [np.asarray(result)]


def check_port_matches_mxnet(source, case, build, out, params_path, budget=None):
    """Convert `source`, run mxnet and the port on the case's inputs; returns (eager, XLA) relative errors."""
    import tensorflow as tf

    from porter.verify.mxnet_reference import run_gluon_reference

    completed = subprocess.run([sys.executable, "-m", "porter", "convert", str(source), "-o", str(out)],
                               capture_output=True, text=True, cwd=REPOSITORY, check=False)
    assert completed.returncode == 0, completed.stderr
    inputs = make_inputs(case.inputs)
    reference = run_gluon_reference(source, case.main, inputs, init_kwargs=case.init_kwargs, perturb=True,
                                    save_parameters=params_path)
    assert reference.outputs[0].shape == case.output_shape
    module = import_port(out, source.name)
    model = build(module)
    model(*[tf.constant(x) for x in inputs])
    state = read_gluon_params(params_path)
    assert set(state) == set(reference.parameters)
    module.load_state_dict(model, state)
    if budget is not None:
        specs = [tf.TensorSpec(x.shape, x.dtype) for x in inputs]
        graph = tf.function(lambda *xs: model(*xs), autograph=False).get_concrete_function(*specs).graph
        transposes = [op.type for op in graph.get_operations()].count("Transpose")
        assert transposes <= budget, f"{transposes} Transpose ops traced"
    errors = []
    compiled = tf.function(lambda *xs: model(*xs), jit_compile=True)
    for run in (lambda *xs: model(*xs), compiled):
        actual = flat_outputs(tf.nest.map_structure(lambda t: t.numpy(), run(*[tf.constant(x) for x in inputs])))
        assert len(actual) == len(reference.outputs)
        worst = 0.0
        for got, expected in zip(actual, reference.outputs):
            assert got.shape == expected.shape
            scale = float(np.max(np.abs(expected))) or 1.0
            worst = max(worst, float(np.max(np.abs(got - expected))) / scale)
        errors.append(worst)
    return errors


@needs_mxnet
@pytest.mark.parametrize("key", sorted(CASES))
def test_model_port_matches_mxnet(key, tmp_path):
    name, case, build = CASES[key]
    eager, xla = check_port_matches_mxnet(MODELS / name, case, build, tmp_path / "port", tmp_path / "model.params",
                                          TRANSPOSE_BUDGET.get(key))
    print(f"{key}: max error relative to the output scale: eager {eager:.2e}, XLA {xla:.2e}")
    assert eager <= 1e-4
    assert xla <= 1e-4


def convert(source, out):
    completed = subprocess.run([sys.executable, "-m", "porter", "convert", str(source), "-o", str(out)],
                               capture_output=True, text=True, cwd=REPOSITORY, check=False)
    assert completed.returncode == 0, completed.stderr
    return json.loads((out / "porter-manifest.json").read_text())


def test_zoo_factory_is_carried_without_mxnet_or_downloads(tmp_path):
    """get_vgg(num_layers, pretrained=False, ctx=cpu(), root=os.path.join(base.data_dir(), ...)): the port keeps the
    factories and the spec table, drops the mxnet/file-system defaults and refuses pretrained=True clearly."""
    manifest = convert(MODELS / "zoo_vgg.py", tmp_path / "port")
    assert manifest["main_class"] == "VGG"  # what `net = vgg5_bn(classes=4)` in __main__ builds
    text = (tmp_path / "port" / "zoo_vgg_keras.py").read_text()
    code = text.split("# --- ported from", 1)[1]
    assert "vgg_spec = {" in code
    assert "def get_vgg(num_layers, pretrained=False, ctx=None, root=None, **kwargs)" in code
    assert "def vgg3(" in code and "def vgg5_bn(" in code
    for foreign in ("import mxnet", "mx.", "cpu()", "os.path", "base.data_dir", "get_model_file", "load_parameters"):
        assert foreign not in code, foreign
    module = import_port(tmp_path / "port", "zoo_vgg.py")
    with pytest.raises(NotImplementedError, match="pretrained"):
        module.get_vgg(3, pretrained=True)
    assert type(module.vgg5_bn(classes=4)).__name__ == "VGG"


@pytest.mark.parametrize("name, main, expected", [
    ("masked_attention.py", "MaskedSelfAttention",  # `x = mx.nd.random.normal(shape=(4, 6, 16))`,
     [{"shape": [6, 16], "dtype": "float32", "low": None, "high": None},  # `mx.nd.array([6, 3, 1, 5])`
      {"shape": [], "dtype": "float32", "low": 1.0, "high": 6.0}]),
    ("resnet_v1.py", "ResNetV1", [{"shape": [3, 32, 32], "dtype": "float32", "low": None, "high": None}]),
    ("mobilenet_v1.py", "MobileNet", [{"shape": [3, 32, 32], "dtype": "float32", "low": None, "high": None}]),
    ("text_rnn_classifier.py", "TextClassifier",  # `mx.nd.random.randint(0, VOCAB_SIZE, ...).astype("float32")`
     [{"shape": [20], "dtype": "float32", "low": 0, "high": 500}]),
    ("zoo_resnet.py", "ResNetV2",  # `net = resnet10_v2(classes=5)`: get_resnet(2, ...) picks resnet_net_versions[1]
     [{"shape": [3, 16, 16], "dtype": "float32", "low": None, "high": None}]),
])
def test_example_inputs_come_from_mxnet_data_code(tmp_path, name, main, expected):
    """The manifest's example inputs and main class from the fixture's own `__main__` (a factory's model counts
    as its class; helpers that add layers are not training code), so `porter verify` needs no --input-shape."""
    from tests.mxnet.gluon_fixtures import GLUON_FIXTURES_DIR

    folder = MODELS if (MODELS / name).exists() else GLUON_FIXTURES_DIR
    manifest = convert(folder / name, tmp_path / "port")
    assert manifest["main_class"] == main
    entry = next(c for c in manifest["sources"][0]["classes"] if c["name"] == main)
    assert [{k: spec[k] for k in ("shape", "dtype", "low", "high")} for spec in entry["example_inputs"]] == expected
