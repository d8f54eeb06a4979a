"""timm model files as installed, whose layouts porter used to lose (each matches torch eagerly and under XLA within
1e-4 of the output's scale, batch 1, the smallest input it takes):

- rexnet.py (ReXNet 1.0, 64x64): its LinearBottleneck's partial shortcut slices the channels of a ConvNormAct's image
  of unknown rank, `x[:, 0:self.in_channels]`: sliced on the last axis where the image lies (45 Transposes before);
- dpn.py (DPN, dpn48b's units): its DualPathBlock splits the same way, `x_s[:, :self.num_1x1_c]` (81 before);
- inception_v3.py: its Inception blocks return their branches as a list built in `_forward`
(`outputs = [branch3x3, branch3x3dbl, branch_pool]`), the convolutions' images of unknown rank (timm's ConvNormAct,
its norm made by a factory) beside a pool's image of rank 4. The list holds them channels-last, all of one rank, and
the `torch.cat(outputs, 1)` joins them where they lie: 1 Transpose (147 before: every list went to torch's order and
back). Full-size InceptionV3 (its widths are fixed), one 75x75 image."""

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


# stem -> (main class, constructor arguments, input size, Transpose bound)
CASES = {
    "inception_v3": ("InceptionV3", {"num_classes": 10}, 75, 2),
    "rexnet": ("RexNet", {"num_classes": 10, "width_mult": 0.5}, 64, 2),
    # dpn48b's kinds of unit (b: its c1x1_c split in two convs), narrow, one a stage
    "dpn": ("DPN", {"num_classes": 10, "small": True, "num_init_features": 10, "k_r": 32, "groups": 8, "b": True,
                    "k_sec": (1, 1, 1, 1), "inc_sec": (8, 8, 8, 16)}, 64, 2),
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    from porter.convert import ConvertOptions, convert
    from porter.output import write_tree

    cache = {}

    def get(stem):
        if stem not in cache:
            main_class, kwargs, size, _ = CASES[stem]
            source = Path(timm.__file__).parent / "models" / f"{stem}.py"
            out = tmp_path_factory.mktemp(stem) / "out"
            conversion = convert(ConvertOptions(source, out))
            assert conversion.main_class == main_class
            write_tree(out, conversion.files)
            spec = importlib.util.spec_from_file_location(f"timm_port_{stem}", out / f"{stem}_keras.py")
            port = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(port)
            torch_model = perturbed(getattr(importlib.import_module(f"timm.models.{stem}"), main_class)(**kwargs))
            keras_model = getattr(port, main_class)(**kwargs)
            x = np.random.default_rng(0).standard_normal((1, 3, size, size)).astype("float32")
            keras_model(x)
            port.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
            cache[stem] = (torch_model, keras_model, x)
        return cache[stem]

    return get


@pytest.mark.parametrize("stem", sorted(CASES))
def test_timm_file_matches_torch(stem, ported):
    assert_port_matches(*ported(stem))


@pytest.mark.parametrize("stem", sorted(CASES))
def test_timm_file_keeps_its_layout(stem, ported):
    _, keras_model, x = ported(stem)
    assert xla_transposes(keras_model, x) <= CASES[stem][3]
