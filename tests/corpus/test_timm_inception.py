"""timm's inception_v3.py as installed: its Inception blocks return their branches as a list built in `_forward`
(`outputs = [branch3x3, branch3x3dbl, branch_pool]`), the convolutions' images of unknown rank (timm's ConvNormAct,
its norm made by a factory) beside a pool's image of rank 4. The list holds them channels-last, all of one rank, and
the `torch.cat(outputs, 1)` joins them where they lie: 1 Transpose (147 before: every list went to torch's order and
back). The port matches torch eagerly and under XLA within 1e-4 of the output's scale. Full-size InceptionV3 (its
widths are fixed), one 75x75 image (the smallest it takes)."""

import importlib
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tests.corpus.test_torchvision import assert_port_matches, perturbed, xla_transposes
from tests.corpus.torchvision_support import import_torchvision

import_torchvision()  # timm imports torchvision, whose compiled ops need their schemas registered first
timm = pytest.importorskip("timm", reason="timm is not installed (scripts/setup.sh installs timm==1.0.31 with "
                                          "--no-deps)")


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    from porter.convert import ConvertOptions, convert
    from porter.output import write_tree

    source = Path(timm.__file__).parent / "models" / "inception_v3.py"
    out = tmp_path_factory.mktemp("inception_v3") / "out"
    conversion = convert(ConvertOptions(source, out))
    assert conversion.main_class == "InceptionV3"
    write_tree(out, conversion.files)
    spec = importlib.util.spec_from_file_location("timm_port_inception_v3", out / "inception_v3_keras.py")
    port = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(port)
    torch_model = perturbed(importlib.import_module("timm.models.inception_v3").InceptionV3(num_classes=10))
    keras_model = port.InceptionV3(num_classes=10)
    x = np.random.default_rng(0).standard_normal((1, 3, 75, 75)).astype("float32")
    keras_model(x)
    port.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    return torch_model, keras_model, x


def test_timm_inception_v3_matches_torch(ported):
    assert_port_matches(*ported)


def test_timm_inception_v3_joins_branches_where_they_lie(ported):
    _, keras_model, x = ported
    assert xla_transposes(keras_model, x) <= 2
