"""Blocks whose layers porter cannot type statically (timm's idiom, in held-out convnets too): the norm and the
activation are constructor arguments or come from a layer factory, the drop-path is `DropPath(rate) if rate else
None`, the squeeze-excite `se_layer(ch) if se_layer else nn.Identity()`, the shortcut a Sequential a helper builds,
and the stages are Sequentials a module-level function fills and the model registers with `add_module`. Such
modules run through `call_module`, which hands them the image channels-last; the blocks, which no translated code
calls, are laid out channels-last too. The port matches torch eagerly and under XLA and traces only the boundary's
Transposes (<= 2), whatever the drawn widths, depths and rates.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.harness import PortedPair
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

SOURCE = '''
import torch
import torch.nn as nn


def get_act_layer(name):
    return {"relu": nn.ReLU, "gelu": nn.GELU, "silu": nn.SiLU}[name]


def create_act_layer(name, inplace=False):
    layer = get_act_layer(name)
    return layer(inplace=inplace) if name == "relu" else layer()


class DropPath(nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        keep = torch.rand(x.shape[0], 1, 1, 1) >= self.p
        return x * keep / (1 - self.p)


class SqueezeExcite(nn.Module):
    def __init__(self, channels, act_layer=nn.ReLU):
        super().__init__()
        self.reduce = nn.Conv2d(channels, max(1, channels // 2), 1)
        self.act = act_layer()
        self.expand = nn.Conv2d(max(1, channels // 2), channels, 1)

    def forward(self, x):
        s = x.mean((2, 3), keepdim=True)
        return x * torch.sigmoid(self.expand(self.act(self.reduce(s))))


class Block(nn.Module):
    def __init__(self, cin, cout, stride=1, downsample=None, norm_layer=nn.BatchNorm2d, act="relu",
                 se_layer=None, drop_path=None):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = norm_layer(cout)
        self.act1 = create_act_layer(act, inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = norm_layer(cout)
        self.se = se_layer(cout) if se_layer else nn.Identity()
        self.downsample = downsample
        self.drop_path = drop_path
        self.act2 = create_act_layer(act)

    def forward(self, x):
        shortcut = x
        x = self.act1(self.bn1(self.conv1(x)))
        x = self.se(self.bn2(self.conv2(x)))
        if self.drop_path is not None:
            x = self.drop_path(x)
        if self.downsample is not None:
            shortcut = self.downsample(shortcut)
        return self.act2(x + shortcut)


def make_stages(widths, depth, norm_layer, act, se_layer, drop_rate):
    stages, cin = [], widths[0]
    for index, cout in enumerate(widths):
        blocks = []
        for number in range(depth):
            stride = 2 if index and not number else 1
            downsample = None
            if stride != 1 or cin != cout:
                downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), norm_layer(cout))
            blocks.append(Block(cin, cout, stride, downsample, norm_layer=norm_layer, act=act, se_layer=se_layer,
                                drop_path=DropPath(drop_rate) if drop_rate > 0 else None))
            cin = cout
        stages.append((f"layer{index + 1}", nn.Sequential(*blocks)))
    return stages


class OpModel(nn.Module):
    def __init__(self, widths=(4, 6), depth=1, act="relu", use_se=True, drop_rate=0.1, num_classes=5):
        super().__init__()
        norm_layer = nn.BatchNorm2d
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 1, 1), norm_layer(widths[0]), nn.ReLU())
        self.stage_names = []
        for name, stage in make_stages(widths, depth, norm_layer, act, SqueezeExcite if use_se else None,
                                       drop_rate):
            self.add_module(name, stage)
            self.stage_names.append(name)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        x = self.stem(x)
        for name in self.stage_names:
            x = getattr(self, name)(x)
        return self.fc(torch.flatten(self.pool(x), 1))
'''


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    """The port of OpModel (named: porter would take the block, the class a factory function builds, as the
    model)."""
    folder = tmp_path_factory.mktemp("factory_blocks")
    (folder / "op_model.py").write_text(SOURCE)
    conversion = convert(ConvertOptions(folder / "op_model.py", folder / "out", class_name="OpModel",
                                        input_specs=["3,8,8"]))
    assert conversion.exit_code == 0, (conversion.exit_code, conversion.manifest)
    write_tree(folder / "out", conversion.files)
    return folder / "out"


@settings(max_examples=6, deadline=None)
@given(widths=st.lists(st.integers(1, 6), min_size=1, max_size=3), depth=st.integers(1, 2),
       act=st.sampled_from(["relu", "gelu", "silu"]), use_se=st.booleans(), drop_rate=st.sampled_from([0.0, 0.2]),
       batch=st.integers(1, 2), size=st.integers(5, 12), seed=st.integers(0, 2**16))
def test_blocks_of_untyped_layers_match_torch_and_convert_only_at_the_boundary(out_dir, widths, depth, act, use_se,
                                                                              drop_rate, batch, size, seed):
    init_args = {"widths": tuple(widths), "depth": depth, "act": act, "use_se": use_se, "drop_rate": drop_rate}
    pair = PortedPair(out_dir, init_args=init_args, seed=seed)
    x = random_input(seed, (batch, 3, size, size))
    assert_matches_converting_at_the_boundary(pair, x)


def test_the_blocks_are_laid_out_channels_last(out_dir):
    code = (out_dir / "op_model_keras.py").read_text()
    block = code.split("class Block(")[1].split("\nclass ")[0]
    assert 'porter_layout = "channels_last"' in block
    assert "to_channels_first" not in block and "to_channels_last" not in block
