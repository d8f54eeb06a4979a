"""GluonCV 0.10.5's classification model zoo (`gluoncv/model_zoo/*.py` as installed in `.venv-mxnet`: Gluon code
written outside this project), converted as the files are and built through each file's own factory functions:
every port loads the `.params` file real mxnet 1.9.1 wrote (BatchNorm statistics and affine parameters moved off
their defaults) and matches mxnet within 1e-4 of the output's scale, eagerly and under XLA, tracing at most 2
Transposes. Networks that do not match yet are strict xfails naming the cause. Networks with global pooling run at 96
pixels or less; two variants whose class another default case already runs (resnest14, squeezenet1_0) need
PORTER_FULL_CORPUS=1 (tests/full_corpus.py).

`import gluoncv` imports its whole library (data loaders needing matplotlib, pandas, opencv, ...), which the
model files never use and `.venv-mxnet` does not have (scripts/setup.sh installs gluoncv with --no-deps); the mxnet
driver then enters the package through namespace stubs of `gluoncv` and `gluoncv.model_zoo` over the real folders
(porter/verify/mxnet_driver.py, `import_by_path`), so the model file and its relative imports (`from ..nn import
ReLU6`) are the real ones. Factories that import `gluoncv.data` themselves (hrnet, shufflenet: ImageNet1kAttr)
need its dependencies tqdm, Pillow and scipy, which scripts/setup.sh installs (numpy kept at 1.23.5)."""

import importlib.util
import subprocess
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from porter.verify.harness import inference_trace, transposes_in
from porter.verify.mxnet_reference import mxnet_python
from porter.weights.gluon_params import read_gluon_params
from tests.full_corpus import full_corpus_only
from tests.mxnet.gluon_fixtures import needs_mxnet
from tests.training.helpers import convert_source


def _xfail(reason):
    return pytest.mark.xfail(strict=True, reason=reason)


# (file stem under model_zoo/, factory, factory arguments, input size (an image's side) or input shape[, marks])
CASES = [
    ("cifarresnet", "cifar_resnet20_v1", {"classes": 10}, 32),
    ("cifarresnet", "cifar_resnet20_v2", {"classes": 10}, 32),
    ("cifarwideresnet", "get_cifar_wide_resnet", {"num_layers": 16, "width_factor": 1, "classes": 10}, 32),
    ("cifarresnext", "get_cifar_resnext", {"num_layers": 29, "cardinality": 2, "bottleneck_width": 4,
                                           "classes": 10}, 32),
    ("resnext", "resnext50_32x4d", {"classes": 10}, 32),
    ("se_resnet", "se_resnet18_v1", {"classes": 10}, 32),
    ("se_resnet", "se_resnet18_v2", {"classes": 10}, 32),
    ("resnet", "resnet18_v2", {"classes": 10}, 32),
    ("resnetv1b", "resnet18_v1b", {"classes": 10}, 32),
    ("resnetv1b", "resnet50_v1d", {"classes": 10}, 32),
    # alexnet.py and vgg.py are left to tests/mxnet/test_gluon_model_zoo.py: their classes are line for line mxnet's
    # own model zoo files (only the imports and the pretrained-weights branch differ, as in every file here)
    # squeezenet.py's classes are line for line mxnet's too: its 1.1 branch runs in test_gluon_model_zoo.py
    pytest.param("squeezenet", "squeezenet1_0", {"classes": 10}, 224,
                 marks=full_corpus_only("test_gluon_model_zoo.py's squeezenet1_1, the same class")),
    ("densenet", "DenseNet", {"num_init_features": 16, "growth_rate": 8, "block_config": [2, 3, 2, 2],
                             "classes": 10}, 224),  # densenet121's code, fewer and narrower layers (31 s -> 12 s)
    ("googlenet", "googlenet", {"classes": 10}, 224),
    ("inception", "inception_v3", {"classes": 10}, 299),
    # global pooling: any size; 96 halves through the same odd/even sizes as 224 (48 24 12 6 3 against 112 56 28 14
    # 7), as for hrnet and shufflenet below
    ("mobilenet", "mobilenet0_25", {"classes": 10}, 96),
    ("mobilenet", "mobilenet_v2_0_25", {"classes": 10}, 96),
    ("xception", "get_xcetption", {"classes": 10}, 43),  # global pooling: any size; 43 halves through the same
    # odd/even sizes as 299 (22 11 6 3 2 against 150 75 38 19 10), so fixed_padding meets the same cases
    ("mobilenetv3", "mobilenet_v3_small", {"classes": 10}, 96),
    ("senet", "SENet", {"layers": [1, 2, 1, 1], "cardinality": 4, "bottleneck_width": 4, "classes": 10},
     32),  # get_senet(50)'s class with fewer blocks a stage (15 s -> 8 s)
    ("residual_attentionnet", "cifar_residualattentionnet56", {"classes": 10}, 32),
    pytest.param("resnest", "resnest14", {"classes": 10}, 224, marks=full_corpus_only(
        "resnest26: the same ResNeSt class and flags, more blocks and DropBlock")),  # 47 Transposes before reshapes, sums and softmax over the
    # radix axis kept the image's layout
    ("dla", "dla34", {"classes": 10}, 64),  # 76 Transposes before Tree's recursion was settled and its
    # `children` list and Root's `*x` kept their images channels-last
    ("nasnet", "get_nasnet", {"repeat": 2, "penultimate_filters": 480, "classes": 10}, 96),  # nasnet_4_1056's
    # code, fewer and narrower cells (41 s -> 32 s). Global pooling: 96 gives the odd/even sizes of 224 (47 24 12 6
    # 3 against 111 56 28 14 7) that the padded-and-cropped pools depend on; cells return (x, x_prev): 57
    # Transposes before tuples kept their images channels-last
    ("hrnet", "hrnet_w18_small_v1_c", {"classes": 10}, 96),  # 97 Transposes before lists started empty kept
    # the channels-last images appended to them (`x_list.append(...)`, `s(*y_list)`, `return x_fuse`)
    ("shufflenet", "shufflenet_v1", {"classes": 10}, 96),
    ("shufflenet", "shufflenet_v2", {"classes": 10}, 96),
    ("resnest", "resnest26", {"classes": 10}, 64),  # DropBlock: `if not mx.autograd.is_training()` is `training`
    ("wideresnet", "WiderResNetA2", {"structure": [1, 1, 1, 1, 1, 1], "classes": 10}, 32),  # 45 Transposes before
    # `norm_act(in_channels)` (a factory function as a parameter default) and a HybridSequential filled in a loop
    # over an OrderedDict of (name, layer) pairs kept their images channels-last
    # video classification (GluonCV's action_recognition/): Conv3D, 3D pools, F.squeeze, clips (N, C, T, H, W)
    ("action_recognition/r2plus1d", "r2plus1d_resnet18_kinetics400", {"nclass": 10}, (1, 3, 2, 16, 16)),
    ("action_recognition/p3d", "p3d_resnet50_kinetics400", {"nclass": 10, "pretrained_base": False},
     (1, 3, 16, 32, 32)),  # 3 Transposes before reshapes that keep the channels whole (`F.reshape(x, (-1, 0, 1, 0,
    # 0))` folding the time axis into the batch before the 2D stage) kept the clip's layout
]
CASE_IDS = [case.values[1] if hasattr(case, "marks") else case[1] for case in CASES]


@cache
def gluoncv_folder():
    """The installed gluoncv package folder in the mxnet venv (found without importing it), or None."""
    script = "import importlib.util as u; s = u.find_spec('gluoncv'); print(s.submodule_search_locations[0] if s else '')"
    try:
        completed = subprocess.run([str(mxnet_python()), "-I", "-c", script], capture_output=True, text=True,
                                   timeout=120, check=False)
    except OSError:
        return None
    folder = completed.stdout.strip()
    return Path(folder) if completed.returncode == 0 and folder else None


needs_gluoncv = pytest.mark.skipif(gluoncv_folder() is None, reason="gluoncv is not installed in the mxnet venv: "
                                   ".venv-mxnet/bin/pip install --no-deps gluoncv==0.10.5.post0")


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    return tmp_path_factory.mktemp("gluoncv")


def _port(ports, stem):
    source = gluoncv_folder() / "model_zoo" / f"{stem}.py"
    out = ports / stem.replace("/", "__")
    if not out.exists():
        convert_source(source, out)  # in process: no Python started per file
    name = source.stem
    spec = importlib.util.spec_from_file_location(f"gluoncv_{name}", out / f"{name}_keras.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return source, module


@needs_mxnet
@needs_gluoncv
@pytest.mark.parametrize("stem, factory, kwargs, size", CASES, ids=CASE_IDS)
def test_gluoncv_network_matches_mxnet(ports, stem, factory, kwargs, size):
    import tensorflow as tf

    from porter.verify.mxnet_reference import run_gluon_reference

    source, module = _port(ports, stem)
    shape = (1, 3, size, size) if isinstance(size, int) else size
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    params = ports / f"{factory}.params"
    reference = run_gluon_reference(source, factory, [x], init_kwargs=kwargs, perturb=True, save_parameters=params)
    model = getattr(module, factory)(**kwargs)
    model(tf.constant(x))  # deferred (in_channels=0) layers are built on a first call
    module.load_state_dict(model, read_gluon_params(params))
    eager = _flat(model(tf.constant(x), training=False))
    compiled, trace = inference_trace(model, [x], jit_compile=True)  # one trace: run under XLA, Transposes counted
    xla = _flat(compiled(tf.constant(x)))
    transposes = transposes_in(trace)
    assert len(eager) == len(xla) == len(reference.outputs)  # NASNet's auxiliary head: two outputs
    errors = [_error(got, expected) for run in (eager, xla) for got, expected in zip(run, reference.outputs)]
    print(f"{factory}: worst error {max(errors):.2e} of the output scale (eager and XLA), {transposes} Transposes")
    assert max(errors) <= 1e-4
    assert transposes <= 2  # channels-last inside: the boundary conversions at most


def _flat(result):
    if isinstance(result, (tuple, list)):
        return [array for item in result for array in _flat(item)]
    return [np.asarray(result)]


def _error(got, expected):
    assert got.shape == expected.shape
    return float(np.max(np.abs(got - expected))) / (float(np.max(np.abs(expected))) or 1.0)
