"""Cadene's pretrainedmodels 0.7.4 model files, converted as they sit in the installed package, match torch.

The files mix model classes with pretrained_settings registries, model_zoo downloads and factory functions; the
whole `pretrainedmodels/models/` folder converts in one `porter convert DIR` call (resnext.py reaches its
`resnext_features/` package through relative imports), the factories' weight downloads are left out as I/O, and
each main class built small (reduced configs where the constructor allows, the input size the fixed pooling
needs otherwise) matches torch eagerly and under XLA within 1e-4 of the output's scale, loading torch's
state_dict with weights and BatchNorm statistics moved off their defaults, and traces at most 2 Transpose ops.
Fixed-size networks (BNInception at 224, InceptionV4 at 299 ...) are marked slow: deselect with -m "not slow".
"""

import importlib.util
import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from tests.corpus.test_torchvision import assert_port_matches, import_by_path, keep_only, xla_transposes
from tests.corpus.torchvision_support import import_torchvision

torchvision = import_torchvision()  # pretrainedmodels/models/__init__.py imports torchvision.models
SPEC = importlib.util.find_spec("pretrainedmodels")
pytestmark = pytest.mark.skipif(SPEC is None or torchvision is None,
                                reason="pretrainedmodels 0.7.4 is not installed (scripts/setup.sh installs it with "
                                       "--no-deps)")
MODELS = Path(SPEC.submodule_search_locations[0]) / "models" if SPEC is not None else None


def torch_module(stem):
    """pretrainedmodels.models.<stem> without running pretrainedmodels/__init__.py (its datasets need tqdm and
    munch, which the model files do not)."""
    if "pretrainedmodels" not in sys.modules:
        package = types.ModuleType("pretrainedmodels")
        package.__path__ = [str(MODELS.parent)]
        package.__spec__ = SPEC  # find_spec("pretrainedmodels") keeps working after this
        sys.modules["pretrainedmodels"] = package
    importlib.import_module("pretrainedmodels.models")
    return importlib.import_module(f"pretrainedmodels.models.{stem}")  # the module, not the factory it exports


def perturbed(model):
    """`model` with every float parameter and buffer moved off its initial value by noise a tenth of its own
    spread (running variances positive): torchvision's tests add noise of 0.1 outright, which makes a 300-layer
    network (PolyNet) overflow to NaN in torch itself."""
    import torch

    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, value in model.state_dict().items():
            if value.dtype.is_floating_point:
                spread = float(value.std()) if value.numel() > 1 and float(value.std()) > 0 else 1.0
                noise = 0.1 * spread * torch.randn(value.shape, generator=generator)
                value.copy_(value.abs() + 0.5 if "running_var" in name else value + noise)
    return model.eval()


def like_the_factory(model):
    """xception() moves `fc` to `last_linear`, which `logits` reads."""
    model.last_linear = model.fc
    del model.fc
    return model


def senet_config(m):
    return dict(block=m.SEResNeXtBottleneck, layers=[1, 1, 1, 1], groups=4, reduction=4, dropout_p=None, inplanes=16,
                input_3x3=False, downsample_kernel_size=1, downsample_padding=0, num_classes=10)


DPN_CONFIG = dict(small=True, num_init_features=10, k_r=32, groups=4, k_sec=(1, 1, 1, 1), inc_sec=(4, 8, 8, 16),
                  num_classes=10, test_time_pool=False)
NASNET_CONFIG = dict(num_classes=10, stem_filters=8, penultimate_filters=96, filters_multiplier=2)
# module (path under models/, without .py) -> (builder (module -> model), input shape)
CASES = {
    "fbresnet": (lambda m: m.FBResNet(m.BasicBlock, [1, 1, 1, 1], num_classes=10), (1, 3, 224, 224)),
    "cafferesnet": (lambda m: m.ResNet(m.Bottleneck, [1, 1, 1, 1], num_classes=10), (1, 3, 224, 224)),
    "senet": (lambda m: m.SENet(**senet_config(m)), (1, 3, 224, 224)),
    "dpn": (lambda m: m.DPN(**DPN_CONFIG), (1, 3, 224, 224)),
    "xception": (lambda m: like_the_factory(m.Xception(num_classes=10)), (1, 3, 71, 71)),
    "nasnet_mobile": (lambda m: m.NASNetAMobile(**NASNET_CONFIG), (1, 3, 224, 224)),
    "nasnet": (lambda m: m.NASNetALarge(**NASNET_CONFIG), (1, 3, 331, 331)),
    "bninception": (lambda m: m.BNInception(num_classes=10), (1, 3, 224, 224)),
    "vggm": (lambda m: m.VGGM(num_classes=10), (1, 3, 221, 221)),
    "inceptionv4": (lambda m: m.InceptionV4(num_classes=10), (1, 3, 299, 299)),
    "inceptionresnetv2": (lambda m: m.InceptionResNetV2(num_classes=10), (1, 3, 299, 299)),
    "resnext": (lambda m: m.ResNeXt101_32x4d(num_classes=10), (1, 3, 224, 224)),
    "pnasnet": (lambda m: m.PNASNet5Large(num_classes=10), (1, 3, 331, 331)),
    "polynet": (lambda m: m.PolyNet(num_classes=10), (1, 3, 331, 331)),
}
# full-size networks (the fixed pooling at the end fixes the input size): minutes on one core; NASNet-A-Mobile's
# 224-pixel graph took 112 s to compile under XLA (its cells are NASNet-A-Large's, whose trace is counted too)
SLOW = {"nasnet_mobile", "nasnet", "bninception", "vggm", "inceptionv4", "inceptionresnetv2", "resnext", "pnasnet", "polynet"}
# ports that match but still trace more Transpose ops than the boundary's two, and why
TRANSPOSES_LEFT = {}


def case_param(stem, xfail=None):
    marks = [pytest.mark.slow] if stem in SLOW else []
    if xfail:
        marks.append(pytest.mark.xfail(reason=xfail, strict=True))
    return pytest.param(stem, marks=marks)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """(exit code, stderr, OUT) of converting pretrainedmodels/models/ in one call."""
    out = tmp_path_factory.mktemp("pretrainedmodels") / "out"
    result = subprocess.run([sys.executable, "-m", "porter.cli", "convert", str(MODELS), "-o", str(out), "--class",
                             "fbresnet.py:FBResNet"], capture_output=True, text=True)
    return result.returncode, result.stderr, out


@pytest.fixture(scope="module")
def ported(converted):
    cache = {}

    def get(stem):
        if stem not in cache:
            keep_only(cache, stem)  # one full-size network at a time: its tests run together (tests/scheduling.py)
            code, stderr, out = converted
            assert code in (0, 1), stderr[-2000:]
            build, shape = CASES[stem]
            port = import_by_path(out / f"{stem}_keras.py", f"pretrainedmodels_port_{stem}")
            torch_model = perturbed(build(torch_module(stem)))
            keras_model = build(port)
            x = np.random.default_rng(0).standard_normal(shape).astype("float32")
            keras_model(x)
            port.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
            cache[stem] = (torch_model, keras_model, x)
        return cache[stem]

    return get


def test_the_models_folder_converts_in_one_call(converted):
    """Every file with model classes is mirrored, none left out; the factories' downloads (model_zoo.load_url)
    are I/O, not stubs in the model code (exit 0); resnext_features/ keeps its package."""
    code, stderr, out = converted
    assert code == 0, stderr[-3000:]
    assert "Traceback" not in stderr
    manifest = json.loads((out / "porter-manifest.json").read_text())
    modules = {entry["module"] for entry in manifest["sources"]}
    assert {f"{stem}_keras.py" for stem in CASES} <= modules
    assert "resnext_features/resnext101_32x4d_features_keras.py" in modules
    assert not manifest["skipped"]
    assert not any(c["unsupported"] for s in manifest["sources"] for c in s["classes"])


@pytest.mark.parametrize("stem", [case_param(stem) for stem in CASES])
def test_pretrainedmodels_file_matches_torch(stem, ported):
    """Eagerly and under XLA; the full-size networks (SLOW) eagerly only: compiling a 300-900-layer graph takes
    20-40 s each on 2 cores, and the XLA path is checked on the other networks and the torchvision corpus."""
    assert_port_matches(*ported(stem), xla=stem not in SLOW)


@pytest.mark.parametrize("stem", [case_param(stem, TRANSPOSES_LEFT.get(stem)) for stem in CASES])
def test_pretrainedmodels_convnet_converts_only_at_its_boundary(stem, ported):
    _, keras_model, x = ported(stem)
    assert xla_transposes(keras_model, x) <= 2
