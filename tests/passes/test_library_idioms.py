"""Idioms of pretrained-model libraries (pretrainedmodels, efficientnet_pytorch) translated as torch runs them.

One model holds them all, converted once; hypothesis draws inputs and the port must match torch eagerly and
under XLA:
- a `nn.Conv2d` subclass with TensorFlow-style static 'same' padding that reads `self.weight` in `__init__` and in
  forward (`F.conv2d(x, self.weight, ...)`): torch's (O, I/g, kh, kw) view of the stored kernel;
- `Base.__init__(self, ...)`, the pre-super() spelling of an in-file base's constructor;
- a `nn.ModuleList()` filled with `add_module('pad', ...)` and called by name (`self.path.pad(x)`), then a crop
  `x[:, :, 1:, 1:]` of the channels-last image;
- a dual-path block chained in a Sequential: the first takes the image, the next its own (resid, dense) pair
  (`torch.cat(x, dim=1) if isinstance(x, tuple) else x`);
- a module built as a constructor default (`act=nn.ReLU(inplace=True)`);
- a stem `nn.Sequential(OrderedDict(pairs))` whose (name, module) list depends on an if/else;
- a cell base class without forward whose helper method the subclasses' forwards call;
- underscored children (`self._blocks`), registered as torch does;
and a pretrained-weight factory (model_zoo.load_url) is I/O, left out of the model code: the conversion exits 0.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import math
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.model_zoo as model_zoo


class Conv2dStaticSamePadding(nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, image_size=None, **kwargs):
        super().__init__(in_channels, out_channels, kernel_size, stride, **kwargs)
        self.stride = self.stride if len(self.stride) == 2 else [self.stride[0]] * 2
        ih, iw = (image_size, image_size) if isinstance(image_size, int) else image_size
        kh, kw = self.weight.size()[-2:]
        sh, sw = self.stride
        oh, ow = math.ceil(ih / sh), math.ceil(iw / sw)
        pad_h = max((oh - 1) * self.stride[0] + (kh - 1) * self.dilation[0] + 1 - ih, 0)
        pad_w = max((ow - 1) * self.stride[1] + (kw - 1) * self.dilation[1] + 1 - iw, 0)
        if pad_h > 0 or pad_w > 0:
            self.static_padding = nn.ZeroPad2d((pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2))
        else:
            self.static_padding = nn.Identity()

    def forward(self, x):
        x = self.static_padding(x)
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class BnAct(nn.Module):
    def __init__(self, channels, act=nn.ReLU(inplace=True)):
        super(BnAct, self).__init__()
        self.bn = nn.BatchNorm2d(channels, eps=0.001)
        self.act = act

    def forward(self, x):
        return self.act(self.bn(x))


class Branch(nn.Module):
    def __init__(self, channels, out_channels, name=None):
        super(Branch, self).__init__()
        self.conv = nn.Conv2d(channels, out_channels, 3, padding=1)
        self.name = name

    def forward(self, x):
        return self.conv(x)


class PaddedBranch(Branch):
    def __init__(self, channels, out_channels):
        Branch.__init__(self, channels, out_channels, "padded")
        self.path = nn.ModuleList()
        self.path.add_module('pad', nn.ZeroPad2d((1, 0, 1, 0)))
        self.path.add_module('pool', nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False))

    def forward(self, x):
        x = self.path.pad(x)
        x = self.path.pool(x)
        x = x[:, :, 1:, 1:].contiguous()
        return self.conv(x)


class DualPathBlock(nn.Module):
    def __init__(self, in_chs, split, inc):
        super(DualPathBlock, self).__init__()
        self.split = split
        self.proj = nn.Conv2d(in_chs, split + inc, 1)
        self.body = nn.Conv2d(in_chs, split + inc, 3, padding=1)
        self.norm = BnAct(split + inc)

    def forward(self, x):
        x_in = torch.cat(x, dim=1) if isinstance(x, tuple) else x
        x_s = self.proj(x_in)
        out = self.norm(self.body(x_in))
        resid = x_s[:, :self.split, :, :] + out[:, :self.split, :, :]
        dense = torch.cat([x_s[:, self.split:, :, :], out[:, self.split:, :, :]], dim=1)
        return resid, dense


class CatBnAct(nn.Module):
    def __init__(self, channels):
        super(CatBnAct, self).__init__()
        self.norm = BnAct(channels)

    def forward(self, x):
        x = torch.cat(x, dim=1) if isinstance(x, tuple) else x
        return self.norm(x)


class CellBase(nn.Module):
    def cell_forward(self, x):
        return self.left(x) + self.right(x)


class Cell(CellBase):
    def __init__(self, channels):
        super(Cell, self).__init__()
        self.left = nn.Conv2d(channels, channels, 1)
        self.right = nn.Sequential(nn.ReLU(), nn.Conv2d(channels, channels, 3, padding=1))

    def forward(self, x):
        return self.cell_forward(x)


class Net(nn.Module):
    def __init__(self, num_classes=5, deep_stem=False, image_size=12):
        super(Net, self).__init__()
        if deep_stem:
            stem = [('conv1', nn.Conv2d(3, 8, 3, padding=1)), ('bn1', nn.BatchNorm2d(8)),
                    ('conv2', nn.Conv2d(8, 8, 3, padding=1))]
        else:
            stem = [('conv1', nn.Conv2d(3, 8, 3, padding=1)), ('bn1', nn.BatchNorm2d(8))]
        stem.append(('relu', nn.ReLU(inplace=True)))
        self.stem = nn.Sequential(OrderedDict(stem))
        self._same = Conv2dStaticSamePadding(8, 8, 3, stride=2, image_size=image_size, groups=2, bias=True)
        self.branch = PaddedBranch(8, 8)
        self._blocks = nn.Sequential(OrderedDict([
            ('dpn1', DualPathBlock(8, 6, 2)),
            ('dpn2', DualPathBlock(10, 6, 2)),
            ('post', CatBnAct(10)),
        ]))
        self.cell = Cell(10)
        self.fc = nn.Linear(10, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self._same(x)
        x = self.branch(x)
        x = self._blocks(x)
        x = self.cell(x)
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def net(pretrained=False):
    model = Net()
    if pretrained:
        model.load_state_dict(model_zoo.load_url("https://example.com/net.pth"))
        model.fc = nn.Linear(10, 7)
    return model
'''

@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("library_idioms"), SOURCE, input_specs=("3,12,12",))


@settings(deadline=None, max_examples=6)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16), scale=st.floats(0.5, 3.0))
def test_library_idioms_match_torch(pair, batch, seed, scale):
    x = random_input(seed, (batch, 3, 12, 12), scale)
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)


def test_library_idioms_convert_only_at_the_boundary(pair):
    """The dual-path blocks return `(resid, dense)` channels-last (a class's tuple keeps its images' layouts), and
    the attribute an if/else binds to one of two block classes is called plainly: 7 Transposes before."""
    x = random_input(0, (2, 3, 12, 12))
    assert count_transposes(pair.keras_model, [x]) <= 2


def test_state_dict_keys_are_torchs(pair):
    """`_blocks`, `_same` and the add_module-named `path.pad`/`path.pool` children under their torch names."""
    keys = {entry.key for entry in pair.keras_model.torch_state()}
    assert keys == {k for k in pair.torch_model.state_dict() if not k.endswith("num_batches_tracked")}


def test_the_weight_download_is_io_not_model_code(pair):
    text = (pair.out_dir / "op_model_keras.py").read_text()
    assert "def net(" not in text and "load_url" not in text


def test_a_module_base_through_a_name_never_imported_is_said(tmp_path):
    """pretrainedmodels' wideresnet.py derives `WideResNet(nn.Module)` without importing nn: one clear line
    naming the class and the missing import, exit 2."""
    import subprocess
    import sys

    source = tmp_path / "wide.py"
    source.write_text("import torch\nimport torch.nn.functional as F\n\n\nclass WideResNet(nn.Module):\n"
                      "    def forward(self, x):\n        return F.relu(x)\n")
    result = subprocess.run([sys.executable, "-m", "porter.cli", "convert", str(source), "-o", str(tmp_path / "out")],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "WideResNet derives from nn.Module" in result.stderr and "never imports 'nn'" in result.stderr
