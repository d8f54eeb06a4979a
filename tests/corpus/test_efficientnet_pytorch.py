"""lukemelas' efficientnet_pytorch 0.7.1, converted as installed, matches torch.

The package (model.py + utils.py, `from .utils import (...)`) converts as a folder and model.py converts alone
(the linker brings in what it imports from utils.py). `EfficientNet.from_name('efficientnet-b0', ...)` builds the
network as the package does (get_model_params, BlockDecoder, round_filters), small: 32x32 images, width 0.25,
depth 0.2. Its interesting parts: Conv2dStaticSamePadding (an nn.Conv2d subclass reading `self.weight` in its
own forward and `__init__`), MemoryEfficientSwish (a torch.autograd.Function), drop_connect, `self._blocks`
(underscored children torch registers). Weights and BatchNorm statistics are moved off their defaults; eager
and XLA outputs must match within 1e-4 of the output's scale.
"""

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from porter.verify.harness import count_transposes
from tests.corpus.test_torchvision import assert_port_matches, import_by_path, perturbed

SPEC = importlib.util.find_spec("efficientnet_pytorch")
pytestmark = pytest.mark.skipif(SPEC is None, reason="efficientnet_pytorch 0.7.1 is not installed (scripts/setup.sh "
                                                     "installs it with --no-deps)")
PACKAGE = SPEC.submodule_search_locations[0] if SPEC is not None else None
SMALL = {"image_size": 32, "num_classes": 10, "width_coefficient": 0.25, "depth_coefficient": 0.2}
# how each conversion is made: (source, --class)
SOURCES = {"package": (PACKAGE, "model.py:EfficientNet"), "model.py": (f"{PACKAGE}/model.py", "EfficientNet")}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    cache = {}

    def get(kind):
        if kind not in cache:
            source, main_class = SOURCES[kind]
            out = tmp_path_factory.mktemp("efficientnet") / "out"
            result = subprocess.run([sys.executable, "-m", "porter.cli", "convert", source, "-o", str(out),
                                     "--class", main_class], capture_output=True, text=True)
            # 0: `if hasattr(nn, 'SiLU')` is decided statically, and from_pretrained (downloads) is I/O, not a stub
            assert result.returncode == 0, result.stderr[-2000:]
            assert "Traceback" not in result.stderr
            get.porting[kind] = (out / "PORTING.md").read_text()
            port = import_by_path(out / "model_keras.py", f"efficientnet_port_{kind.replace('.', '_')}")
            from efficientnet_pytorch import EfficientNet

            torch_model = perturbed(EfficientNet.from_name("efficientnet-b0", **SMALL))
            keras_model = port.EfficientNet.from_name("efficientnet-b0", **SMALL)
            x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype("float32")
            keras_model(x)
            port.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
            cache[kind] = (torch_model, keras_model, x)
        return cache[kind]

    get.porting = {}  # kind -> the port's PORTING.md
    return get


@pytest.mark.parametrize("kind", sorted(SOURCES))
def test_efficientnet_matches_torch(kind, ported):
    assert_port_matches(*ported(kind))


def test_efficientnet_trains_with_drop_connect(ported):
    """training=True runs drop_connect (a random keep mask per sample) and BatchNorm's batch statistics: finite,
    the batch shape kept."""
    _, keras_model, x = ported("package")
    keras_model._global_params = keras_model._global_params._replace(drop_connect_rate=0.5)
    out = np.asarray(keras_model(x, training=True))
    assert out.shape == (2, 10) and np.isfinite(out).all()


def test_efficientnet_converts_only_at_its_boundary(ported):
    """`get_same_padding_conv2d(image_size)` returns one of two nn.Conv2d subclasses: the translator follows them
    (one layout for both), and the elementwise autograd Function (MemoryEfficientSwish) keeps channels-last."""
    _, keras_model, x = ported("package")
    assert count_transposes(keras_model, [x]) <= 2


def test_efficientnet_leaves_pretrained_downloads_out(ported):
    """`EfficientNet.from_pretrained` downloads weights through utils.load_pretrained_weights: listed as not carried
    over (the port loads weights with `porter convert --weights`), not stubbed."""
    _, keras_model, _ = ported("model.py")
    assert not hasattr(type(keras_model), "from_pretrained") and hasattr(type(keras_model), "from_name")
    porting = ported.porting["model.py"]
    assert "`def EfficientNet.from_pretrained(...)  (pretrained-weight download or file I/O)`" in porting
