"""mxnet 1.9.1's own model zoo files (`mxnet/gluon/model_zoo/vision/*.py`, as installed in `.venv-mxnet`),
converted as they are and built through the file's own factory functions: each port loads the `.params` file real
mxnet wrote (parameters and BatchNorm statistics moved off their defaults) and matches mxnet within 1e-4 of the
output's scale, eagerly and under XLA, tracing at most 2 Transposes. Inputs at the smallest size each architecture
takes (AlexNet and VGG, whose Dense layers take any size: the smallest that leaves 2x2 features to flatten), batch 1.
The zoo files' relative imports reach mxnet itself (`from .... import base`): framework code, never linked into the
port."""

import importlib.util
import subprocess
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from porter.verify.harness import inference_trace, transposes_in
from porter.verify.mxnet_reference import mxnet_python
from porter.weights.gluon_params import read_gluon_params
from tests.mxnet.gluon_fixtures import needs_mxnet
from tests.training.helpers import convert_source

# file stem -> (factory or class, input size[, constructor arguments besides classes=10])
ZOO = {
    "resnet": [("resnet18_v1", 32), ("resnet50_v2", 32)],
    "alexnet": [("alexnet", 96)],  # as VGG: 2x2x256 features (23 11 5 2 through its pools, as 55 27 13 6 at 224)
    "vgg": [("vgg11_bn", 64)],  # the 4096-unit Dense layers take any size (in_units deferred): at 64 the
    # flattened features are 2x2x512 (channels-last flattening still has to reorder them), 8M weights, not 100M
    "densenet": [("DenseNet", 224, {"num_init_features": 16, "growth_rate": 8, "block_config": [2, 3, 2, 2]})],
    # densenet121's code with fewer, narrower layers (26 s -> about 10 s): AvgPool2D(7) still needs 224
    "inception": [("inception_v3", 299)],
    "squeezenet": [("squeezenet1_1", 224)],
    "mobilenet": [("mobilenet0_25", 224), ("mobilenet_v2_0_25", 224)],
}
CASES = [(stem, entry[0], entry[1], {**(entry[2] if len(entry) > 2 else {}), "classes": 10})
         for stem, entries in ZOO.items() for entry in entries]


@cache
def zoo_folder():
    """The installed mxnet's model_zoo/vision folder (asked of the mxnet venv once: importing mxnet takes seconds)."""
    completed = subprocess.run([str(mxnet_python()), "-c", "import mxnet, os; print(os.path.dirname(mxnet.__file__))"],
                               capture_output=True, text=True, check=True)
    return Path(completed.stdout.strip()) / "gluon" / "model_zoo" / "vision"


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    return tmp_path_factory.mktemp("zoo")


@needs_mxnet
@pytest.mark.parametrize("stem, factory, size, kwargs", CASES, ids=[c[1] for c in CASES])
def test_model_zoo_network_matches_mxnet(ports, stem, factory, size, kwargs):
    import tensorflow as tf

    from porter.verify.mxnet_reference import run_gluon_reference

    source = zoo_folder() / f"{stem}.py"
    out = ports / stem
    if not out.exists():
        convert_source(source, out)  # in process: no Python started per file
    x = np.random.default_rng(0).standard_normal((1, 3, size, size)).astype(np.float32)
    params = ports / f"{factory}.params"
    reference = run_gluon_reference(source, factory, [x], init_kwargs=kwargs, perturb=True,
                                    save_parameters=params)
    spec = importlib.util.spec_from_file_location(f"zoo_{stem}", out / f"{stem}_keras.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = getattr(module, factory)(**kwargs)
    model(tf.constant(x))  # deferred (in_channels=0) layers are built on a first call
    module.load_state_dict(model, read_gluon_params(params))
    expected = reference.outputs[0]
    scale = float(np.max(np.abs(expected)))
    eager = model(tf.constant(x), training=False).numpy()
    compiled, trace = inference_trace(model, [x], jit_compile=True)  # one trace: run under XLA, Transposes counted
    xla = compiled(tf.constant(x)).numpy()
    print(f"{factory}: eager {np.max(np.abs(eager - expected)) / scale:.2e}, "
          f"XLA {np.max(np.abs(xla - expected)) / scale:.2e}")
    assert np.max(np.abs(eager - expected)) <= 1e-4 * scale
    assert np.max(np.abs(xla - expected)) <= 1e-4 * scale
    assert transposes_in(trace) <= 2  # channels-last inside: the boundary conversions at most
