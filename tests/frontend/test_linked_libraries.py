"""Model files building on an installed torch library: its classes and factories are linked in from its own files.

User code derives its backbone from torchvision's model classes (`class Backbone(ResNet)`, as
segmentation-models-pytorch's encoders do) and builds backbones with its factories (`models.resnet34(pretrained=
False)`, `torchvision.models.resnet18(weights=None, num_classes=5)`). porter linked definitions of the file's own
package only: a class deriving from `ResNet` was an internal error (`ResNet` undefined in the port, exit 3) and a
factory call was a stub. The linker now takes them from the library's files, found on sys.path without importing
the library (frontend/libraries.py): module classes and the factories building them, with what they use; the
factories' decorators (registries, the `pretrained=` legacy shim) and weight enums are left out with the downloads,
and a legacy `pretrained=` argument is still accepted. Each port matches torch for drawn sizes (batch 1 included)
and converts only at its boundary, parts of a built backbone included (`vgg.features`, `mobilenet_v2().features`,
`nn.Sequential(*list(resnet.children())[:-2])`: 4 Transposes before, the modules' layouts being unknown), helpers
imported directly (vgg.py's `make_layers`, ops' `Conv2dNormActivation`, whose base is beside it), factories named
like their module (`models.googlenet`), a segmentation factory whose backbone weights default to an enum, and a
classifier layer replaced by item assignment into a Sequential (the runtime's Sequential had no `__setitem__`).
"""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.frontend.libraries import library_root, torch_libraries
from tests.corpus.torchvision_support import import_torchvision
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

torchvision = import_torchvision()
pytestmark = pytest.mark.skipif(torchvision is None, reason="torchvision is not installed (scripts/setup.sh)")

SOURCES = {
    "derived": '''
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torchvision.models.resnet import Bottleneck, ResNet


        class Backbone(ResNet):
            def __init__(self):
                super().__init__(Bottleneck, [1, 1, 1, 1], width_per_group=16)
                del self.fc

            def forward(self, x):
                x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
                c3 = self.layer2(self.layer1(x))
                return c3, self.layer3(c3)


        class OpModel(nn.Module):
            def __init__(self, num_classes=3):
                super().__init__()
                self.backbone = Backbone()
                self.lateral = nn.Conv2d(1024, 512, 1)
                self.head = nn.Conv2d(512, num_classes, 3, padding=1)

            def forward(self, x):
                c3, c4 = self.backbone(x)
                top = F.interpolate(self.lateral(c4), size=c3.shape[-2:], mode="nearest")
                return self.head(top + c3)
    ''',
    "factories": '''
        import torch
        import torch.nn as nn
        import torchvision
        from torchvision import models


        class OpModel(nn.Module):
            def __init__(self, num_classes=5):
                super().__init__()
                self.legacy = models.resnet34(pretrained=False, num_classes=num_classes)
                self.current = torchvision.models.resnet18(weights=None, num_classes=num_classes)

            def forward(self, x):
                return self.legacy(x) + self.current(x)
    ''',
    "parts": '''
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import torchvision.models as models


        class OpModel(nn.Module):
            def __init__(self, num_classes=3):
                super().__init__()
                resnet = models.resnet18(weights=None)
                self.trunk = nn.Sequential(*list(resnet.children())[:-2])
                vgg = models.vgg11(weights=None)
                self.features = vgg.features
                self.mobile = models.mobilenet_v2(weights=None).features
                self.head = nn.Conv2d(512 + 512 + 1280, num_classes, 1)

            def forward(self, x):
                parts = [self.trunk(x), self.features(x), self.mobile(x)]
                return self.head(torch.cat([F.adaptive_avg_pool2d(p, 2) for p in parts], dim=1))
    ''',
    "helpers": '''
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torchvision import models
        from torchvision.models.vgg import make_layers
        from torchvision.ops.misc import Conv2dNormActivation
        from torchvision.models.segmentation import lraspp_mobilenet_v3_large


        class OpModel(nn.Module):
            def __init__(self, num_classes=3):
                super().__init__()
                self.features = make_layers([8, "M", 16, "M"], batch_norm=True)
                self.fuse = Conv2dNormActivation(16, 16, kernel_size=3)
                self.goog = models.googlenet(weights=None, aux_logits=False, num_classes=num_classes)  # (a factory
                # named like its module, googlenet.py)
                self.small = models.mobilenet_v3_small(weights=None)
                self.small.classifier[3] = nn.Linear(1024, num_classes)  # (item assignment into a Sequential)
                vgg = models.vgg11(weights=None).features
                self.slice = vgg[:2]  # (a slice of a built trunk: its layers' layouts)
                self.seg = lraspp_mobilenet_v3_large(weights_backbone=None, num_classes=num_classes)

            def forward(self, x):
                y = self.fuse(self.features(x)).mean(dim=(2, 3))[:, :3] + self.goog(x) + self.small(x)
                return self.seg(x)["out"] * y[:, :, None, None] + self.slice(x)[:, :3]
    ''',
}


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(SOURCES[name]),
                                    input_specs=("3,32,32",)))


def test_a_library_is_found_without_importing_it():
    root = library_root("torchvision")
    assert root is not None and (root / "torchvision" / "models" / "resnet.py").is_file()
    assert library_root("os") is None and library_root("torch") is None and library_root("no_such_pkg") is None
    found = torch_libraries(["torchvision.models.resnet", "einops", "collections"], own_top="")
    assert list(found) == ["torchvision"]  # (einops works on any framework: it stays an import)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_linked_definitions_are_in_the_port(pairs, name):
    code = (pairs(name).out_dir / "op_model_keras.py").read_text()
    assert "class ResNet(TorchModule)" in code or "class VGG(TorchModule)" in code
    assert "UnsupportedModule(" not in code and "not_supported(" not in code  # (no stub)
    assert "_Weights.verify(" not in code and "@handle_legacy_interface" not in code  # (weights are downloads)
    report = (pairs(name).out_dir / "PORTING.md").read_text()
    assert "definitions linked from the installed torchvision" in report and "torchvision/models/" in report


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), size=st.integers(32, 47),
       name=st.sampled_from(sorted(SOURCES)))
def test_port_matches_torch(pairs, seed, batch, size, name):
    assert_same_outputs(pairs(name), [random_input(seed, (batch, 3, size, size + 3))], tolerance=1e-4)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_port_converts_only_at_its_boundary(pairs, name):
    from porter.verify.harness import count_transposes

    inputs = [random_input(0, (2, 3, 32, 32))]
    assert_same_outputs(pairs(name), inputs, tolerance=1e-4, jit=True)
    assert count_transposes(pairs(name).keras_model, inputs) <= 2


CLASSMETHOD_FACTORY = '''
import torch.nn as nn
from efficientnet_pytorch import EfficientNet


class OpModel(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.backbone = EfficientNet.from_name("efficientnet-b0", num_classes=num_classes)
        self.trunk = EfficientNet.from_name("efficientnet-b0")

    def forward(self, x):
        return self.backbone(x) + self.trunk.extract_features(x).mean(dim=(2, 3))[:, :3]
'''


def test_a_librarys_classmethod_factory(tmp_path):
    """efficientnet_pytorch's `EfficientNet.from_name(...)`: the package's `__init__.py` reads no torch, its
    model.py, which it imports from, does (a stub before); a classmethod building its class is that class to the
    layout passes, so `self.trunk.extract_features(x)` is its method (a channels-last method handed torch's layout
    before: ValueError at run time). The port matches torch."""
    pytest.importorskip("efficientnet_pytorch", reason="efficientnet_pytorch is not installed (scripts/setup.sh)")
    from porter.verify.harness import count_transposes

    pair = port(tmp_path, CLASSMETHOD_FACTORY, input_specs=("3,32,32",))
    for seed, batch in ((0, 1), (1, 2)):
        assert_same_outputs(pair, [random_input(seed, (batch, 3, 32, 35))], tolerance=1e-4)
    inputs = [random_input(2, (2, 3, 32, 32))]
    assert_same_outputs(pair, inputs, tolerance=1e-4, jit=True)
    assert count_transposes(pair.keras_model, inputs) <= 2  # (the method laid out as the forward is: 40 before)


REGISTERING_DECORATORS = '''
import torch.nn as nn
from monai.networks.nets import UNet


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.unet = UNet(spatial_dims=2, in_channels=3, out_channels=2, channels=(8, 16, 32), strides=(2, 2),
                         num_res_units=1)

    def forward(self, x):
        return self.unet(x)
'''


def test_decorators_filling_a_librarys_tables_are_kept(tmp_path):
    """MONAI's layer factories are filled by decorated functions (`@Norm.factory_function("instance")`), which its
    classes read in their defaults (`norm=Norm.INSTANCE`): only the model registries and the weights shims are
    left out of linked code (a port without them did not import: 'LayerFactory' object has no attribute
    'INSTANCE')."""
    pytest.importorskip("monai", reason="monai is not installed (scripts/setup.sh)")
    from porter.convert import ConvertOptions
    from porter.output import write_tree
    from porter.verify.harness import PortedPair
    from tests.in_process import convert

    (tmp_path / "op_model.py").write_text(REGISTERING_DECORATORS)
    conversion = convert(ConvertOptions(tmp_path / "op_model.py", tmp_path / "out", input_specs=["3,32,32"]))
    assert conversion.exit_code == 1  # (two stubs in MONAI's optional imports, which this model never runs)
    write_tree(tmp_path / "out", conversion.files)
    pair = PortedPair(tmp_path / "out")
    for seed, batch in ((0, 1), (1, 2)):
        assert_same_outputs(pair, [random_input(seed, (batch, 3, 32, 32))], tolerance=1e-4)


PRETRAINED_ENUM = '''
import torch.nn as nn
from torchvision.models import resnet18, ResNet18_Weights
from torchvision.models.segmentation import fcn_resnet50


class OpModel(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.backbone = resnet18(weights=ResNet18_Weights.DEFAULT)
        self.backbone.fc = nn.Linear(512, num_classes)
        self.seg = fcn_resnet50(weights="DEFAULT", aux_loss=False)

    def forward(self, x):
        return self.backbone(x)
'''


def test_pretrained_weights_asked_for_are_not_downloaded(tmp_path):
    """`resnet18(weights=ResNet18_Weights.DEFAULT)`, `fcn_resnet50(weights="DEFAULT")`: torch downloads them (no
    network here: torch's side is not built); the port builds the same architecture without them, its factories'
    weights parameters cleared (the enum, translated to a string, reached `weights.meta`: AttributeError when the
    port was built), and the report says to load the torch model's state_dict."""
    import importlib.util

    import numpy as np

    from porter.convert import ConvertOptions
    from porter.output import write_tree
    from tests.in_process import convert

    (tmp_path / "op_model.py").write_text(PRETRAINED_ENUM)
    conversion = convert(ConvertOptions(tmp_path / "op_model.py", tmp_path / "out", input_specs=["3,32,32"]))
    assert conversion.exit_code == 0
    assert any("pretrained weights are not downloaded" in str(w) for w in conversion.warnings)
    write_tree(tmp_path / "out", conversion.files)
    spec = importlib.util.spec_from_file_location("pretrained_port", tmp_path / "out" / "op_model_keras.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.OpModel()
    assert tuple(model(np.zeros((1, 3, 32, 32), "float32")).shape) == (1, 5)
