"""A model file of a package converts with the definitions it imports from that package linked in: the port
imports on its own and matches the torch model built from the package."""

import importlib
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.corpus.test_torchvision import import_by_path, perturbed

PACKAGE = {
    "shop/__init__.py": "",
    "shop/utils.py": '''
        import math


        def round_channels(channels, divisor=4):
            return max(divisor, int(math.ceil(channels / divisor) * divisor))
    ''',
    "shop/layers.py": '''
        from typing import Callable, Optional

        import torch
        from torch import nn

        from .utils import round_channels


        class ConvNormAct(nn.Sequential):
            def __init__(self, cin: int, cout: int, stride: int = 1,
                         norm_layer: Optional[Callable[..., nn.Module]] = nn.BatchNorm2d) -> None:
                layers = [nn.Conv2d(cin, round_channels(cout), 3, stride, 1, bias=False)]
                layers.append(norm_layer(round_channels(cout)))
                layers.append(nn.ReLU(inplace=True))
                super().__init__(*layers)


        def unused_plot_helper(x):
            import matplotlib.pyplot as plt
            plt.plot(x)
    ''',
    "shop/models/__init__.py": "",
    "shop/models/net.py": '''
        import torch
        from torch import nn, Tensor

        from ..layers import ConvNormAct as CNA
        from ..utils import round_channels


        class Net(nn.Module):
            def __init__(self, width: int = 6, num_classes: int = 5) -> None:
                super().__init__()
                self.stem = CNA(3, width, stride=2)
                self.body = CNA(round_channels(width), 2 * width)
                self.head = nn.Linear(round_channels(2 * width), num_classes)

            def forward(self, x: Tensor) -> Tensor:
                x = self.body(self.stem(x))
                return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))
    ''',
}


def write_files(root, files):
    """Write {relative path: text} under `root`."""
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)


@pytest.fixture
def package(tmp_path, monkeypatch):
    for relative, text in PACKAGE.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [n for n in sys.modules if n == "shop" or n.startswith("shop.")]:
        del sys.modules[name]


def test_package_definitions_are_linked_in_and_match_torch(package, tmp_path):
    import torch

    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "porter.cli", "convert", str(package / "shop/models/net.py"),
                             "-o", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    text = (out / "net_keras.py").read_text()
    # layers.py holds a module class: it is mirrored beside net_keras.py, whose ConvNormAct comes from its port
    # (translated the same way there); utils.py holds none: its helper is carried over
    assert 'layers_keras = load_port_module(__file__, "layers_keras.py")' in text
    assert "ConvNormAct = layers_keras.ConvNormAct" in text and "class ConvNormAct(" not in text
    assert "class ConvNormAct(" in (out / "layers_keras.py").read_text()
    assert "def round_channels(" in text and "CNA = ConvNormAct" in text
    assert "unused_plot_helper" not in text and "matplotlib" not in text
    manifest = json.loads((out / "porter-manifest.json").read_text())
    assert [entry["module"] for entry in manifest["sources"]] == ["net_keras.py", "layers_keras.py"]
    assert manifest["sources"][0]["imports"] == [
        {"module": "layers_keras.py", "source": "layers.py", "names": ["ConvNormAct"]}]
    assert "layers_keras.py" in manifest["files"] and "layers_keras_runtime.py" not in manifest["files"]  # one
    # runtime module for the port: net_keras_runtime.py
    torch_model = perturbed(importlib.import_module("shop.models.net").Net())
    port = import_by_path(out / "net_keras.py", "linked_port")
    keras_model = port.Net()
    x = np.random.default_rng(1).standard_normal((2, 3, 16, 16)).astype("float32")
    port.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    got = np.asarray(keras_model(x, training=False))
    assert float(np.abs(got - expected).max()) <= 1e-4 * float(np.abs(expected).max())


def test_loose_files_link_nothing(tmp_path):
    source = tmp_path / "loose.py"
    source.write_text("import torch.nn as nn\nfrom .layers import Block\n\nclass Net(nn.Module):\n"
                      "    def forward(self, x):\n        return x\n")
    from porter.frontend.linker import linked_text

    text = source.read_text()
    assert linked_text(source, text, "", lambda name: False) == (text, frozenset(), {}, [], {})


GLUON_PACKAGE = {
    "cv/__init__.py": "raise ImportError('the whole library needs tqdm')\n",
    "cv/nn/__init__.py": "from .block import *\n",
    "cv/nn/block.py": '''
        from mxnet.gluon.nn import HybridBlock

        __all__ = ["ReLU6", "GroupNorm"]


        class ReLU6(HybridBlock):
            def hybrid_forward(self, F, x):
                return F.clip(x, 0, 6)


        class GroupNorm(HybridBlock):
            def hybrid_forward(self, F, x):
                return x
    ''',
    "cv/data/__init__.py": '''
        class Labels(object):
            def __init__(self):
                self.classes = ["cat", "dog"]
    ''',
    "cv/zoo/__init__.py": "",
    "cv/zoo/net.py": '''
        from mxnet.gluon import nn
        from mxnet.gluon.block import HybridBlock
        from ..nn import ReLU6


        class Net(HybridBlock):
            def __init__(self, norm_layer=nn.BatchNorm, **kwargs):
                super(Net, self).__init__(**kwargs)
                self.act = ReLU6()

            def hybrid_forward(self, F, x):
                return self.act(x)


        def net_gn(**kwargs):
            from ..nn import GroupNorm
            net = Net(norm_layer=GroupNorm, **kwargs)
            return net


        class ClsNet(Net):
            pass


        def cls_net(**kwargs):
            net = ClsNet(**kwargs)
            from ..data import Labels
            net.classes = Labels().classes
            return net
    ''',
}


def test_gluon_blocks_factories_and_their_local_imports_are_linked(tmp_path):
    """A Gluon block base (`HybridBlock`), or a block class of the same file (HRNet's HighResolutionBaseNet), makes a
    class a root, a factory that builds it is one too, and the imports inside a factory (`from ..nn import
    GroupNorm`, `from ..data import Labels` after building the subclass) are linked like the module's own."""
    from porter.frontend.linker import linked_text

    for relative, text in GLUON_PACKAGE.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(textwrap.dedent(text))
    source = tmp_path / "cv" / "zoo" / "net.py"
    _, defined, _, _, _ = linked_text(source, source.read_text(), "cv.zoo", lambda name: False)
    assert {"ReLU6", "GroupNorm", "Labels"} <= defined


ALIASED_PACKAGE = {
    "kit/__init__.py": "",
    "kit/ops.py": '''
        import torch
        from torch import nn


        class SqueezeExcitation(nn.Module):
            def __init__(self, channels, squeeze, scale_activation=nn.Sigmoid):
                super().__init__()
                self.fc1 = nn.Conv2d(channels, squeeze, 1)
                self.fc2 = nn.Conv2d(squeeze, channels, 1)
                self.scale_activation = scale_activation()

            def forward(self, x):
                scale = torch.relu(self.fc1(nn.functional.adaptive_avg_pool2d(x, 1)))
                return x * self.scale_activation(self.fc2(scale))
    ''',
    "kit/models/__init__.py": "",
    "kit/models/mobile.py": '''
        from functools import partial

        from torch import nn

        from ..ops import SqueezeExcitation as SElayer


        class Block(nn.Module):
            def __init__(self, channels, se_layer=partial(SElayer, scale_activation=nn.Hardsigmoid)):
                super().__init__()
                self.conv = nn.Conv2d(3, channels, 3, padding=1)
                self.se = se_layer(channels, 2)

            def forward(self, x):
                return self.se(self.conv(x))
    ''',
    "kit/models/quantization/__init__.py": "",
    "kit/models/quantization/mobile.py": '''
        from torch import nn

        from ..mobile import Block


        class QuantizableBlock(Block):
            def __init__(self, channels=4):
                super().__init__(channels)
                self.act = nn.ReLU()

            def forward(self, x):
                return self.act(self.se(self.conv(x)))
    ''',
}


def test_an_import_alias_in_a_linked_file_is_bound_before_its_definitions(tmp_path, monkeypatch):
    """torchvision's quantization/mobilenetv3.py links mobilenetv3.py, which imports `SqueezeExcitation as SElayer`
    and names it in a default argument: the linked file's import of the linked-in class is replaced by `SElayer =
    SqueezeExcitation` before the definitions that use it (it came after them, and the import stayed too: exit 3)."""
    import torch

    for relative, text in ALIASED_PACKAGE.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "porter.cli", "convert",
                             str(tmp_path / "kit/models/quantization/mobile.py"), "-o", str(out),
                             "--input-shape", "3,8,8"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    text = (out / "mobile_keras.py").read_text()
    assert "import SqueezeExcitation" not in text
    assert text.index("SElayer = SqueezeExcitation") < text.index("class Block(")
    try:
        torch_model = perturbed(importlib.import_module("kit.models.quantization.mobile").QuantizableBlock())
    finally:
        for name in [n for n in sys.modules if n == "kit" or n.startswith("kit.")]:
            del sys.modules[name]
    port = import_by_path(out / "mobile_keras.py", "aliased_linked_port")
    keras_model = port.QuantizableBlock()
    port.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    x = np.random.default_rng(2).standard_normal((2, 3, 8, 8)).astype("float32")
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    got = np.asarray(keras_model(x, training=False))
    assert float(np.abs(got - expected).max()) <= 1e-4 * float(np.abs(expected).max())


def test_linked_modules_come_after_the_modules_they_need(tmp_path):
    """A module completed first for one name (helpers.py for `make_act`) may later give a class whose base lives in a
    module linked after it (`class NormAct(Norm)`, wanted through zoo.py: timm's norm_act.py and norm.py): modules
    are placed after those their definitions need, not in the order they were first completed."""
    from porter.frontend.linker import linked_text

    files = {
        "lib/__init__.py": "",
        "lib/norm.py": "from torch import nn\n\n\nclass Norm(nn.Module):\n    pass\n",
        "lib/helpers.py": "from torch import nn\nfrom .norm import Norm\n\n\ndef make_act():\n    return nn.ReLU()\n\n\n"
                          "class NormAct(Norm):\n    pass\n",
        "lib/zoo.py": "from torch import nn\nfrom .helpers import NormAct\n\n\nclass Thing(nn.Module):\n"
                      "    def __init__(self):\n        super().__init__()\n        self.norm = NormAct()\n",
        "lib/net.py": "from torch import nn\nfrom .helpers import make_act\nfrom .zoo import Thing\n\n\n"
                      "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                      "        self.act = make_act()\n        self.thing = Thing()\n",
    }
    write_files(tmp_path, files)
    source = tmp_path / "lib" / "net.py"
    text, defined, _, _, _ = linked_text(source, source.read_text(), "lib", lambda name: False)
    assert {"Norm", "NormAct", "make_act", "Thing"} <= defined
    assert text.index("class Norm(") < text.index("class NormAct(Norm)") < text.index("class Thing(")



def test_a_module_comes_after_the_module_defining_a_name_it_imports_through_a_package(tmp_path):
    """timm's byobnet.py imports `ConvNormAct` from `timm.layers`, whose `__init__` re-exports conv_bn_act.py's, and
    reads it when the module runs (a dataclass default). A module completed early (here through a function-body
    import back into it) was placed before conv.py: the package it names defines nothing itself, so what it
    re-exports was not seen as needed."""
    from porter.frontend.linker import linked_text

    files = {
        "lib/__init__.py": "",
        "lib/layers/__init__.py": "from .conv import ConvAct\n",
        "lib/layers/conv.py": "from torch import nn\n\n\nclass ConvAct(nn.Module):\n    def __init__(self):\n"
                              "        super().__init__()\n        from ..fns import WIDTH\n"
                              "        self.conv = nn.Conv2d(WIDTH, WIDTH, 1)\n",
        "lib/fns.py": "from dataclasses import dataclass\nfrom .layers import ConvAct\n\nWIDTH = 4\n\n\n"
                      "@dataclass\nclass Fns:\n    conv: type = ConvAct\n",
        "lib/net.py": "from torch import nn\nfrom .fns import Fns\n\n\nclass Net(nn.Module):\n"
                      "    def __init__(self):\n        super().__init__()\n        self.conv = Fns().conv()\n",
    }
    write_files(tmp_path, files)
    source = tmp_path / "lib" / "net.py"
    text, defined, _, _, _ = linked_text(source, source.read_text(), "lib", lambda name: False)
    assert {"ConvAct", "Fns", "WIDTH"} <= defined
    assert text.index("class ConvAct(") < text.index("conv: type = ConvAct")


def test_each_linked_definition_keeps_its_own_files_lines(tmp_path):
    """A linked definition's lines map back to its own file (a stub in it then says `norm.py:8` wherever it is
    translated, so its port and an importer's translation of it are the same text); the importer's lines stay."""
    from porter.frontend.linker import linked_text
    from porter.frontend.source import parse_source

    files = {
        "lib/__init__.py": "",
        "lib/norm.py": "# norms\nfrom torch import nn\n\n\nclass Unused(nn.Module):\n    pass\n\n\n"
                       "# the one we take\nclass Norm(nn.Module):\n    def forward(self, x):\n        return x\n",
        "lib/net.py": "from torch import nn\nfrom .norm import Norm\n\n\nclass Net(nn.Module):\n"
                      "    def __init__(self):\n        super().__init__()\n        self.norm = Norm()\n",
    }
    write_files(tmp_path, files)
    source = tmp_path / "lib" / "net.py"
    text, _, _, lines, _ = linked_text(source, source.read_text(), "lib", lambda name: False)
    [(first, last, origin, origin_line)] = lines
    assert origin == (tmp_path / "lib" / "norm.py").resolve() and origin_line == 9 and last == first + 3
    assert text.splitlines()[first - 1:last] == files["lib/norm.py"].splitlines()[8:12]
    parsed = parse_source(source)
    assert parsed.origin(first + 2) == ("norm.py", 11) and parsed.origin(3) == ("net.py", 3)
    assert parsed.origin(last + 1) == ("net.py", last + 1)  # past the definition: the text's own line


def test_a_statements_line_is_where_its_text_starts_a_line_after_the_one_before():
    from porter.frontend.linker import _StatementLines

    text = "def f():\n    x = 1\n    return x\n\n\nx = 1\ny = 2\n"
    lines = _StatementLines(text)
    assert lines.first_line("x = 1\n") == 6  # not the indented line inside f
    assert lines.first_line("y = 2\n") == 7 and lines.first_line("    x = 1\n") is None

MODULE_ATTRIBUTE_PACKAGE = {
    "zoo/__init__.py": "",
    "zoo/base.py": '''
        import torch
        from torch import nn


        def channel_shuffle(x, groups):
            n, c, h, w = x.shape
            return x.view(n, groups, c // groups, h, w).transpose(1, 2).reshape(n, c, h, w)


        class Block(nn.Module):
            def __init__(self, channels):
                super().__init__()
                self.conv = nn.Conv2d(channels, channels, 3, padding=1)
                self.bn = nn.BatchNorm2d(channels)

            def forward(self, x):
                return torch.relu(self.bn(self.conv(x)))
    ''',
    "zoo/quant/__init__.py": "",
    "zoo/quant/net.py": '''
        import torch
        from torch import nn
        from zoo import base as base_module
        import zoo.base


        class QuantBlock(base_module.Block):
            def forward(self, x):
                return base_module.channel_shuffle(super().forward(x), 2)


        class QuantNet(nn.Module):
            def __init__(self, channels=4):
                super().__init__()
                self.first = QuantBlock(channels)
                self.second = zoo.base.Block(channels)

            def forward(self, x):
                return self.second(self.first(x))
    ''',
}


def test_bases_and_calls_through_an_imported_module_are_linked(tmp_path, monkeypatch):
    """torchvision's quantization/inception.py derives from `inception_module.InceptionA` (`from torchvision.models
    import inception as inception_module`), shufflenetv2.py calls `shufflenetv2.channel_shuffle`: definitions
    reached through an imported in-package module are linked like imported names (the file exited 2, "no
    nn.Module subclass"), and the port matches torch."""
    import torch

    for relative, text in MODULE_ATTRIBUTE_PACKAGE.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "porter.cli", "convert", str(tmp_path / "zoo/quant/net.py"), "-o",
                             str(out), "--input-shape", "4,6,6"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    try:
        torch_model = perturbed(importlib.import_module("zoo.quant.net").QuantNet())
    finally:
        for name in [n for n in sys.modules if n == "zoo" or n.startswith("zoo.")]:
            del sys.modules[name]
    port = import_by_path(out / "net_keras.py", "module_attribute_port")
    keras_model = port.QuantNet()
    port.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    x = np.random.default_rng(3).standard_normal((2, 4, 6, 6)).astype("float32")
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    got = np.asarray(keras_model(x, training=False))
    assert float(np.abs(got - expected).max()) <= 1e-4 * float(np.abs(expected).max())


def test_a_name_two_linked_modules_define_differently_is_linked_under_a_name_of_its_own(tmp_path):
    """timm's bottleneck_attn.py and halo_attn.py each define a different `PosEmbedRel`; torchvision's
    video/swin_transformer.py defines its own `_get_relative_position_bias` beside the one the SwinTransformerBlock it
    links uses. One text holds a name once: the later definition is linked under a name of its own, and the
    definitions of its module say that name (the file exited 2, "defined a second time", or silently used the other
    definition). The linked text runs in torch with each class using its own helper."""
    import torch  # noqa: F401  (the linked text imports it)

    from porter.frontend.linker import linked_text

    files = {
        "lib/__init__.py": "",
        "lib/a.py": "from torch import nn\n\n\ndef helper():\n    return 1\n\n\nclass A(nn.Module):\n"
                    "    def __init__(self):\n        super().__init__()\n        self.k = helper()\n",
        "lib/b.py": "from torch import nn\n\n\ndef helper():\n    return 2\n\n\nclass B(nn.Module):\n"
                    "    def __init__(self, k=helper):\n        super().__init__()\n        self.k = k()\n",
        "lib/c.py": "from torch import nn\nfrom .b import helper\n\n\nclass C(nn.Module):\n"
                    "    def __init__(self):\n        super().__init__()\n        self.k = helper() + 10\n",
        "lib/net.py": "from torch import nn\nfrom .a import A\nfrom .b import B\nfrom .c import C\n\n\n"
                      "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                      "        self.a, self.b, self.c = A(), B(), C()\n",
    }
    write_files(tmp_path, files)
    source = tmp_path / "lib" / "net.py"
    text, defined, origins, _, home_names = linked_text(source, source.read_text(), "lib", lambda name: False)
    assert text.count("def helper(") == 1 and text.count("def helper_b(") == 1 and "helper_b" in defined
    assert origins["helper"] == (tmp_path / "lib" / "a.py").resolve()
    assert home_names == {"helper_b": "helper"}  # its name in b.py: its port holds it so
    assert origins["helper_b"] == (tmp_path / "lib" / "b.py").resolve()
    namespace = {}
    exec(compile(text.replace("from .a import A\nfrom .b import B\nfrom .c import C\n", ""), "linked", "exec"),
         namespace)
    net = namespace["Net"]()
    assert (net.a.k, net.b.k, net.c.k) == (1, 2, 12)


def test_a_name_two_files_import_differently_is_imported_under_a_name_of_its_own(tmp_path):
    """lucidrains' perceiver_io.py imports torch's `einsum` and links perceiver_pytorch.py, which imports einops'
    `einsum` (operands first, then a pattern): in one text the file's import won, and the linked attention called
    torch's einsum with einops' arguments (the port failed at run time). The linked module's import gets a name of
    its own that its definitions say; the linked text runs in torch with each file's own einsum."""
    import torch

    from porter.frontend.linker import linked_text

    files = {
        "lib/__init__.py": "",
        "lib/attend.py": "from einops import einsum\nfrom torch import nn\n\n\nclass Attend(nn.Module):\n"
                         "    def forward(self, q, k):\n        return einsum(q, k, 'b i d, b j d -> b i j')\n",
        "lib/net.py": "from torch import nn, einsum\nfrom lib.attend import Attend\n\n\nclass Net(nn.Module):\n"
                      "    def __init__(self):\n        super().__init__()\n        self.attend = Attend()\n\n"
                      "    def forward(self, q, k):\n        return self.attend(q, k) + einsum('bid,bjd->bij', q, k)\n",
    }
    write_files(tmp_path, files)
    source = tmp_path / "lib" / "net.py"
    text, _, _, _, _ = linked_text(source, source.read_text(), "lib", lambda name: False)
    assert "from einops import einsum as einsum_attend" in text and "einsum_attend(q, k, 'b i d" in text
    namespace = {}
    exec(compile(text.replace("from lib.attend import Attend\n", ""), "linked", "exec"), namespace)
    q, k = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
    expected = 2 * torch.einsum("bid,bjd->bij", q, k)
    assert torch.allclose(namespace["Net"]()(q, k), expected, atol=1e-6)


# segmentation_models_pytorch's layout: the model class derives from a base a package `__init__` re-exports
# (`from ..base import SegModel`), that base mixes in a hub class deriving from a third-party one, and a layer module
# of the package stubs a third-party layer (InPlaceABN) on a branch the model does not take
SEGMENTATION_PACKAGE = {
    "hubthing/__init__.py": '''
        class HubMixin:
            def push_to_hub(self, repo):
                raise RuntimeError("offline")
    ''',
    "seg/__init__.py": "",
    "seg/base/__init__.py": '''
        from .model import SegModel
        from .layers import ConvBlock

        __all__ = ["SegModel", "ConvBlock"]
    ''',
    "seg/base/hub.py": '''
        from hubthing import HubMixin


        class SegHubMixin(HubMixin):
            def push_to_hub(self, repo, card=None):
                self.card = card
                return super().push_to_hub(repo)
    ''',
    "seg/base/model.py": '''
        import torch

        from .hub import SegHubMixin


        class SegModel(torch.nn.Module, SegHubMixin):
            def forward(self, x):
                features = self.encoder(x)
                decoded = self.decoder(*features)
                return self.head(decoded)
    ''',
    "seg/base/layers.py": '''
        import torch.nn as nn

        try:
            from inplace_abn import InPlaceABN
        except ImportError:
            InPlaceABN = None


        class ConvBlock(nn.Sequential):
            def __init__(self, cin, cout, use_batchnorm=True):
                conv = nn.Conv2d(cin, cout, 3, padding=1, bias=not use_batchnorm)
                if use_batchnorm == "inplace":
                    bn = InPlaceABN(cout, activation="leaky_relu")
                    act = nn.Identity()
                else:
                    bn = nn.BatchNorm2d(cout) if use_batchnorm else nn.Identity()
                    act = nn.ReLU()
                super().__init__(conv, bn, act)
    ''',
    "seg/nets/__init__.py": "",
    "seg/nets/unet.py": '''
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        from ..base import SegModel, ConvBlock


        class Encoder(nn.Module):
            def __init__(self, widths=(4, 8, 8)):
                super().__init__()
                self.stages = nn.ModuleList()
                cin = 3
                for w in widths:
                    self.stages.append(nn.Sequential(nn.Conv2d(cin, w, 3, stride=2, padding=1), nn.ReLU()))
                    cin = w

            def forward(self, x):
                features = [x]
                for stage in self.stages:
                    x = stage(x)
                    features.append(x)
                return features


        class Block(nn.Module):
            def __init__(self, cin, skip, cout):
                super().__init__()
                self.conv = ConvBlock(cin + skip, cout)

            def forward(self, x, skip=None):
                x = F.interpolate(x, scale_factor=2, mode="nearest")
                if skip is not None:
                    x = torch.cat([x, skip], dim=1)
                return self.conv(x)


        class Decoder(nn.Module):
            def __init__(self, encoder_channels=(3, 4, 8, 8), decoder_channels=(8, 4, 4)):
                super().__init__()
                encoder_channels = encoder_channels[1:][::-1]
                in_channels = [encoder_channels[0]] + list(decoder_channels[:-1])
                skip_channels = list(encoder_channels[1:]) + [0]
                self.blocks = nn.ModuleList([Block(i, s, o)
                                             for i, s, o in zip(in_channels, skip_channels, decoder_channels)])

            def forward(self, *features):
                features = features[1:][::-1]
                x = features[0]
                skips = features[1:]
                for i, block in enumerate(self.blocks):
                    skip = skips[i] if i < len(skips) else None
                    x = block(x, skip)
                return x


        class Unet(SegModel):
            def __init__(self, classes=2):
                super().__init__()
                self.encoder = Encoder()
                self.decoder = Decoder()
                self.head = nn.Conv2d(4, classes, 3, padding=1)
    ''',
}


def test_a_re_exported_module_base_with_a_third_party_mixin_converts_and_stubs_count_once(tmp_path, monkeypatch):
    """`class Unet(SegModel)` with SegModel re-exported by `base/__init__.py` is a module class (main: "no nn.Module
    subclass found"); SegModel's mixin (deriving from a third-party class) is not linked (main: exit 3, an undefined
    `HubMixin`); the stubs of layers.py's port are counted once, where its code is, by the CLI and PORTING.md alike;
    the port takes the encoder's feature list unpacked (`self.decoder(*features)`) channels-last and matches torch."""
    import torch

    from porter.verify.harness import count_transposes

    for relative, text in SEGMENTATION_PACKAGE.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "porter.cli", "convert", str(tmp_path / "seg/nets/unet.py"),
                             "-o", str(out), "--input-shape", "3,16,16"], capture_output=True, text=True)
    assert result.returncode == 1, result.stderr  # InPlaceABN's branch is stubbed in base/layers_keras.py
    text = (out / "unet_keras.py").read_text()
    assert "HubMixin" not in text and "class SegModel(" in (out / "base/model_keras.py").read_text()
    manifest = json.loads((out / "porter-manifest.json").read_text())
    counts = {entry["module"]: sum(len(c["unsupported"]) for c in entry["classes"]) for entry in manifest["sources"]}
    stubs_in_code = {module: (out / module).read_text().count("is not supported yet") for module in counts}
    assert counts == stubs_in_code and counts["base/layers_keras.py"] == 1, (counts, stubs_in_code)
    total = sum(counts.values())
    assert f"{total} stubs: see PORTING.md" in result.stdout
    porting = (out / "PORTING.md").read_text()
    assert f"| Stubs (unsupported constructs) | {counts['unet_keras.py']} |" in porting
    assert f"Stubs in all the modules written: {total}." in porting
    try:
        torch_model = perturbed(importlib.import_module("seg.nets.unet").Unet())
    finally:
        for name in [n for n in sys.modules if n.split(".")[0] in ("seg", "hubthing")]:
            del sys.modules[name]
    port = import_by_path(out / "unet_keras.py", "segmentation_linked_port")
    keras_model = port.Unet()
    port.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    x = np.random.default_rng(3).standard_normal((2, 3, 16, 16)).astype("float32")
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    got = np.asarray(keras_model(x, training=False))
    assert float(np.abs(got - expected).max()) <= 1e-4 * float(np.abs(expected).max())
    assert count_transposes(keras_model, [x]) <= 2


def test_a_module_the_linker_read_is_parsed_once_for_every_file_that_links_it(package, monkeypatch):
    """Converting the files of one library in one process (a package, the corpus tests) reads its helper modules
    for each file: the parse of a text already read is taken again (libcst trees are immutable), and a text that
    changed is parsed anew."""
    from porter.frontend import linker
    from porter.frontend.unchecked_parse import parsed_module

    parsed = []
    monkeypatch.setattr(linker, "parsed_module", lambda text, early=True: parsed.append(text) or
                        parsed_module(text, early=early))
    monkeypatch.setattr(linker, "_PARSES", {})
    path = package / "shop/models/net.py"
    first = linker.linked_text(path, path.read_text(), "shop.models", lambda name: False)
    read = len(parsed)
    assert read >= 3  # the file itself, layers.py, utils.py
    assert linker.linked_text(path, path.read_text(), "shop.models", lambda name: False) == first
    assert len(parsed) == read + 1  # the file's own text only: its library modules were parsed already
    utils = package / "shop/utils.py"
    utils.write_text(utils.read_text() + "\n\nSCALE = 2\n")
    linker.linked_text(path, path.read_text(), "shop.models", lambda name: False)
    assert len(parsed) == read + 3  # the file's text again, and the changed utils.py


def test_the_parse_table_keeps_the_most_recently_read_texts_within_its_bound(monkeypatch):
    from porter.frontend import linker

    monkeypatch.setattr(linker, "_PARSES", {})
    monkeypatch.setattr(linker, "_PARSES_MAX_CHARACTERS", 100)
    texts = [f"x{i} = {'1' * 30}\n" for i in range(6)]  # 36 characters each
    for text in texts:
        linker._parsed_library_module(text)
    assert list(linker._PARSES) == texts[-2:]
    kept = linker._PARSES[texts[-1]]
    assert linker._parsed_library_module(texts[-1]) is kept
    assert linker._parsed_library_module(texts[-2]) is linker._PARSES[texts[-2]]
    assert list(linker._PARSES) == [texts[-1], texts[-2]]  # the most recently read last


FACTORIES_ONLY = {
    "zoo/__init__.py": "",
    "zoo/layers/__init__.py": "from .conv import ConvAct\n",
    "zoo/layers/conv.py": '''
        from torch import nn


        class ConvAct(nn.Sequential):
            def __init__(self, cin, cout, stride=1):
                super().__init__(nn.Conv2d(cin, cout, 3, stride, 1), nn.BatchNorm2d(cout), nn.ReLU())
    ''',
    "zoo/store.py": '''
        import hashlib


        def download_model(net, name):
            return hashlib.sha1(name.encode()).hexdigest()
    ''',
    "zoo/alexnet.py": '''
        from dataclasses import dataclass

        import torch
        from torch import nn

        from .layers import ConvAct


        @dataclass
        class LayerFns:
            conv: type = ConvAct  # read when the class is made: conv.py's block must come first


        class AlexNet(nn.Module):
            def __init__(self, channels, strides, num_classes=7, fns=None):
                super().__init__()
                fns = fns or LayerFns()
                layers, cin = [], 3
                for cout, stride in zip(channels, strides):
                    layers.append(fns.conv(cin, cout, stride))
                    cin = cout
                self.features = nn.Sequential(*layers)
                self.head = nn.Linear(cin, num_classes)

            def forward(self, x):
                return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))
    ''',
    "zoo/zfnet.py": '''
        """Factories of a sibling file's class only (pytorchcv's zfnet.py builds alexnet.py's AlexNet)."""
        from .alexnet import AlexNet


        def get_zfnet(version="a", pretrained=False, **kwargs):
            if version == "a":
                channels = [6, 8]
            else:
                channels = [6, 12]
            net = AlexNet(channels=channels, strides=[2, 1], **kwargs)
            if pretrained:
                from .store import download_model
                download_model(net, "zfnet")
            return net


        def zfnet(**kwargs):
            return get_zfnet(version="a", **kwargs)


        def zfnetb(**kwargs):
            return get_zfnet(version="b", **kwargs)
    ''',
}


def test_a_file_of_factories_of_a_sibling_files_class_converts_and_matches_torch(tmp_path, monkeypatch):
    """A file holding only factories of a class another file of its package defines (pytorchcv's zfnet.py,
    fdmobilenet.py, resnet_cub.py; timm's byoanet.py) was 'no nn.Module subclass found': the class and what it needs
    are linked in, as for a file whose own classes use them, and the port builds it as the first factory does."""
    import torch

    for relative, text in FACTORIES_ONLY.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "porter.cli", "convert", str(tmp_path / "zoo/zfnet.py"),
                             "-o", str(out), "--input-shape", "3,12,12"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "main class AlexNet built by zfnet()" in result.stdout
    manifest = json.loads((out / "porter-manifest.json").read_text())
    assert manifest["main_class"] == "AlexNet" and manifest["model_factory"] == "zfnet"
    assert "hashlib" not in (out / "zfnet_keras.py").read_text()  # the pretrained branch's download stays behind
    try:
        torch.manual_seed(0)
        torch_model = perturbed(importlib.import_module("zoo.zfnet").zfnet())
    finally:
        for name in [n for n in sys.modules if n == "zoo" or n.startswith("zoo.")]:
            del sys.modules[name]
    port = import_by_path(out / "zfnet_keras.py", "factories_only_port")
    keras_model = port.zfnet()
    port.load_state_dict(keras_model, {k: v.numpy() for k, v in torch_model.state_dict().items()})
    x = np.random.default_rng(2).standard_normal((2, 3, 12, 12)).astype("float32")
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    got = np.asarray(keras_model(x, training=False))
    assert float(np.abs(got - expected).max()) <= 1e-4 * float(np.abs(expected).max())


def test_a_linked_definition_named_as_a_torch_import_of_the_file_is_linked_under_a_name_of_its_own(tmp_path):
    """timm's layers/typing.py defines `F = TypeVar("F", ...)` for its decorators; a model file importing
    `torch.nn.functional as F` linked it as `F`, so the file's `F` named no import any more (`F.rms_norm` untranslated,
    timm's naflexvit.py an internal error). The definition is linked as `F_typing_utils`, its uses renamed; an
    import a linked module makes of a name another definition has is renamed the same way."""
    from porter.frontend.source import parse_source

    files = {
        "lib/__init__.py": "",
        "lib/typing_utils.py": "from typing import Callable, TypeVar\n\nF = TypeVar('F', bound=Callable)\n\n\n"
                               "def passthrough(fn: F) -> F:\n    return fn\n",
        "lib/net.py": "import torch.nn.functional as F\nfrom torch import nn\nfrom .typing_utils import passthrough\n\n\n"
                      "class Net(nn.Module):\n    @passthrough\n    def forward(self, x):\n        return F.relu(x)\n",
    }
    write_files(tmp_path, files)
    source = parse_source(tmp_path / "lib" / "net.py")
    import libcst as cst

    assert source.imports.resolve(cst.Name("F")) == "torch.nn.functional"
    assert "F_typing_utils = TypeVar('F', bound=Callable)" in source.text
    assert "def passthrough(fn: F_typing_utils) -> F_typing_utils:" in source.text


def test_an_import_continued_by_a_backslash_is_relinked_as_valid_code(tmp_path):
    """timm's _builder.py imports `has_hf_hub, download_cached_file, check_cached_file, load_state_dict_from_hf, \\`
    over two lines: the names were copied with the backslash and its newline inside the import's parentheses-free
    list, and the linked text did not parse ("cannot parse the file" for timm's hardcorenas.py)."""
    import ast

    from porter.frontend.linker import linked_text

    files = {
        "lib/__init__.py": "",
        "lib/utils.py": "from math import ceil, \\\n    floor\n\n\ndef rounded(x):\n    return ceil(x) + floor(x)\n",
        "lib/net.py": "from torch import nn\nfrom .utils import rounded\n\n\nclass Net(nn.Module):\n"
                      "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(rounded(2.5), 2)\n",
    }
    write_files(tmp_path, files)
    source = tmp_path / "lib" / "net.py"
    text, _, _, _, _ = linked_text(source, source.read_text(), "lib", lambda name: False)
    ast.parse(text)
    assert "from math import ceil, floor" in text


def test_a_registration_in_another_files_table_is_linked_and_kept(tmp_path):
    """timm's mobilevit.py registers its blocks in byobnet.py's table (`register_block("mobilevit",
    MobileVitBlock)`), which byobnet's `create_block` reads: the registering function is linked with the table, and
    the registration is model code the port keeps (the port raised "Unknown block type" building the model)."""
    from porter.frontend.source import parse_source

    files = {
        "zoo/__init__.py": "",
        "zoo/byob.py": "import torch.nn as nn\n\n_registry = dict(plain=nn.Identity)\n\n\n"
                       "def register_block(kind, fn):\n    _registry[kind] = fn\n\n\n"
                       "def create_block(kind, **kwargs):\n    return _registry[kind](**kwargs)\n\n\n"
                       "class Net(nn.Module):\n    def __init__(self, kind='plain'):\n        super().__init__()\n"
                       "        self.block = create_block(kind)\n\n    def forward(self, x):\n"
                       "        return self.block(x)\n",
        "zoo/mine.py": "import torch.nn as nn\nfrom .byob import register_block, Net\n\n\n"
                       "class Mine(nn.Module):\n    def forward(self, x):\n        return x * 2\n\n\n"
                       "register_block('mine', Mine)\n",
    }
    write_files(tmp_path, files)
    source = parse_source(tmp_path / "zoo" / "mine.py")
    assert "def register_block(kind, fn):" in source.text
    assert source.registrars["register_block"] == ["_registry"]
    from porter.frontend.names import top_level_bindings

    registering = [source.code_of(s).strip() for s in top_level_bindings(source.module)["_registry"]]
    assert "register_block('mine', Mine)" in registering
