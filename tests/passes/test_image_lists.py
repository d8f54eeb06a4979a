"""Multi-resolution images held in Python lists (HRNet's HighResolutionModule, written as GluonCV and timm write it):
lists started empty and grown with `append`, built by comprehension, indexed by loop variables, unpacked into a
block's call (`stage(*xs)`), items replaced (`x[i] = branch(x[i])`), summed in loops and returned from a class's
call. The images stay channels-last inside the lists (porter/ir/lists.py), so the port traces only the boundary
Transpose, and matches torch eagerly and under XLA. A loop reading what an earlier iteration appended before it
appends (the list is read before any item is in) keeps torch's layout and matches too. On main both HRNet-style
ports raised InvalidArgumentError (channels-last items read as torch's)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

MODEL = '''
import torch
from torch import nn
import torch.nn.functional as F
from typing import List


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)) + x)


class MultiResolutionBlock(nn.Module):
    """Branches per resolution, then every branch fused into every other (HRNet's HighResolutionModule)."""

    def __init__(self, channels):
        super().__init__()
        self.num_branches = len(channels)
        self.branches = nn.ModuleList([BasicBlock(c) for c in channels])
        fuse_layers = []
        for i in range(self.num_branches):
            fuse_layer = []
            for j in range(self.num_branches):
                if j > i:
                    fuse_layer.append(nn.Sequential(nn.Conv2d(channels[j], channels[i], 1, bias=False),
                                                    nn.BatchNorm2d(channels[i]),
                                                    nn.Upsample(scale_factor=2 ** (j - i), mode="nearest")))
                elif j == i:
                    fuse_layer.append(nn.Identity())
                else:
                    steps = []
                    for k in range(i - j):
                        last = k == i - j - 1
                        steps.append(nn.Sequential(
                            nn.Conv2d(channels[j], channels[i] if last else channels[j], 3, 2, 1, bias=False),
                            nn.BatchNorm2d(channels[i] if last else channels[j])))
                        if not last:
                            steps.append(nn.ReLU())
                    fuse_layer.append(nn.Sequential(*steps))
            fuse_layers.append(nn.ModuleList(fuse_layer))
        self.fuse_layers = nn.ModuleList(fuse_layers)

    def forward(self, x, *rest):
        xs = []
        xs.append(self.branches[0](x))
        for i in range(1, self.num_branches):
            xs.append(self.branches[i](rest[i - 1]))
        fused = []
        for i in range(len(self.fuse_layers)):
            y = xs[0] if i == 0 else self.fuse_layers[i][0](xs[0])
            for j in range(1, self.num_branches):
                y = y + self.fuse_layers[i][j](xs[j])
            fused.append(F.relu(y))
        return fused


class ListBlock(nn.Module):
    """timm-style: the images come in one list, the branches replace its items."""

    def __init__(self, channels):
        super().__init__()
        self.branches = nn.ModuleList([BasicBlock(c) for c in channels])
        self.fuse = MultiResolutionBlock(channels)

    def forward(self, x: List[torch.Tensor]) -> List[torch.Tensor]:
        for i, branch in enumerate(self.branches):
            x[i] = branch(x[i])
        return self.fuse(*x)


class Net(nn.Module):
    def __init__(self, width=4, classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        channels = [width, width * 2, width * 4]
        self.transition = nn.ModuleList(
            [nn.Identity()] + [nn.Sequential(nn.Conv2d(width, c, 3, 2 ** k, 1, bias=False), nn.BatchNorm2d(c),
                                             nn.ReLU()) for k, c in enumerate(channels[1:], 1)])
        self.stages = nn.ModuleList([MultiResolutionBlock(channels), MultiResolutionBlock(channels)])
        self.last = ListBlock(channels)
        self.head = nn.Linear(sum(channels), classes)

    def forward(self, x):
        x = self.stem(x)
        xs = [t(x) for t in self.transition]
        for stage in self.stages:
            xs = stage(*xs)
        xs = self.last(xs)
        pooled = [torch.mean(t, dim=(2, 3)) for t in xs]
        return self.head(torch.cat(pooled, dim=1))
'''

# timm's hrnet.py as it writes HighResolutionModule (a list argument whose items the branches replace, fuse layers
# reached by `for j, f in enumerate(fuse_outer)` after `y = None`) and its stages (`[t(x) for i, t in
# enumerate(self.transition1)]`, an nn.Sequential of modules called on a list)
TIMM_STYLE = '''
import torch
from torch import nn
from typing import List


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)) + x)


class HighResolutionModule(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.num_branches = len(channels)
        self.branches = nn.ModuleList([nn.Sequential(BasicBlock(c), BasicBlock(c)) for c in channels])
        self.fuse_layers = self._make_fuse_layers(channels)
        self.fuse_act = nn.ReLU(False)

    def _make_fuse_layers(self, channels):
        fuse_layers = []
        for i in range(self.num_branches):
            fuse_layer = []
            for j in range(self.num_branches):
                if j > i:
                    fuse_layer.append(nn.Sequential(
                        nn.Conv2d(channels[j], channels[i], 1, 1, 0, bias=False),
                        nn.BatchNorm2d(channels[i]),
                        nn.Upsample(scale_factor=2 ** (j - i), mode='nearest')))
                elif j == i:
                    fuse_layer.append(nn.Identity())
                else:
                    conv3x3s = []
                    for k in range(i - j):
                        if k == i - j - 1:
                            conv3x3s.append(nn.Sequential(
                                nn.Conv2d(channels[j], channels[i], 3, 2, 1, bias=False),
                                nn.BatchNorm2d(channels[i])))
                        else:
                            conv3x3s.append(nn.Sequential(
                                nn.Conv2d(channels[j], channels[j], 3, 2, 1, bias=False),
                                nn.BatchNorm2d(channels[j]),
                                nn.ReLU(False)))
                    fuse_layer.append(nn.Sequential(*conv3x3s))
            fuse_layers.append(nn.ModuleList(fuse_layer))
        return nn.ModuleList(fuse_layers)

    def forward(self, x: List[torch.Tensor]) -> List[torch.Tensor]:
        if self.num_branches == 1:
            return [self.branches[0](x[0])]

        for i, branch in enumerate(self.branches):
            x[i] = branch(x[i])

        x_fuse = []
        for i, fuse_outer in enumerate(self.fuse_layers):
            y = None
            for j, f in enumerate(fuse_outer):
                if y is None:
                    y = f(x[j])
                else:
                    y = y + f(x[j])
            x_fuse.append(self.fuse_act(y))
        return x_fuse


class Net(nn.Module):
    def __init__(self, width=4, classes=5):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.act1 = nn.ReLU()
        channels = [width, width * 2]
        self.transition1 = nn.ModuleList([
            nn.Identity(),
            nn.Sequential(nn.Sequential(nn.Conv2d(width, width * 2, 3, 2, 1, bias=False), nn.BatchNorm2d(width * 2),
                                        nn.ReLU()))])
        self.stage2 = nn.Sequential(HighResolutionModule(channels), HighResolutionModule(channels))
        channels3 = [width, width * 2, width * 4]
        self.transition2 = nn.ModuleList([
            nn.Identity(), nn.Identity(),
            nn.Sequential(nn.Sequential(nn.Conv2d(width * 2, width * 4, 3, 2, 1, bias=False),
                                        nn.BatchNorm2d(width * 4), nn.ReLU()))])
        self.stage3 = nn.Sequential(HighResolutionModule(channels3))
        self.head = nn.Linear(sum(channels3), classes)

    def stages(self, x) -> List[torch.Tensor]:
        xl = [t(x) for i, t in enumerate(self.transition1)]
        yl = self.stage2(xl)
        xl = [t(yl[-1]) if not isinstance(t, nn.Identity) else yl[i] for i, t in enumerate(self.transition2)]
        yl = self.stage3(xl)
        return yl

    def forward(self, x):
        x = self.act1(self.bn1(self.conv1(x)))
        yl = self.stages(x)
        return self.head(torch.cat([t.mean((2, 3)) for t in yl], 1))
'''

# a U-Net keeping its skips in a list grown with `+=` and emptied with `pop()`, then iterated through `reversed`
SKIPS = '''
import torch
from torch import nn
import torch.nn.functional as F


class UNet(nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.down = nn.ModuleList([nn.Conv2d(3 if i == 0 else width, width, 3, padding=1) for i in range(3)])
        self.up = nn.ModuleList([nn.Conv2d(2 * width, width, 3, padding=1) for _ in range(3)])
        self.out = nn.Conv2d(width, 2, 1)

    def forward(self, x):
        skips = []
        for conv in self.down:
            x = F.relu(conv(x))
            skips += [x]
            x = F.max_pool2d(x, 2)
        x = F.interpolate(x, scale_factor=2)
        for i, conv in enumerate(self.up):
            skip = skips.pop()
            x = F.relu(conv(torch.cat([x, skip], dim=1)))
            if i < 2:
                x = F.interpolate(x, scale_factor=2)
        extra = []
        for s in reversed(skips):
            extra.append(s)
        return self.out(x), torch.stack(extra, 0).sum(0) if extra else x
'''

CHAIN = '''
import torch
from torch import nn


class Chain(nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3 if i == 0 else width, width, 3, padding=1) for i in range(3)])

    def forward(self, x):
        feats = []
        for i, conv in enumerate(self.convs):
            inp = x if i == 0 else feats[-1]
            feats.append(torch.relu(conv(inp)))
        return torch.cat(feats, dim=1)
'''


@pytest.fixture(scope="module")
def hrnet(tmp_path_factory):
    return port(tmp_path_factory.mktemp("image_lists"), MODEL, input_specs=("3,16,16",))


@pytest.fixture(scope="module")
def timm_style(tmp_path_factory):
    return port(tmp_path_factory.mktemp("timm_style"), TIMM_STYLE, input_specs=("3,16,16",))


@pytest.fixture(scope="module")
def skips(tmp_path_factory):
    return port(tmp_path_factory.mktemp("skips"), SKIPS, input_specs=("3,16,16",))


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    return port(tmp_path_factory.mktemp("read_before_append"), CHAIN, input_specs=("3,8,8",))


def test_lists_of_images_convert_nothing(hrnet):
    code = (hrnet.out_dir / "op_model_keras.py").read_text()
    assert "call_module(" not in code.split("class MultiResolutionBlock", 1)[1].split("class Net", 1)[0]
    assert "to_channels_first(" not in code.split("class MultiResolutionBlock", 1)[1]


@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 2), quarter=st.integers(1, 4), width=st.integers(2, 5), seed=st.integers(0, 2**16))
def test_multi_resolution_block_matches_torch(hrnet, batch, quarter, width, seed):
    pair = PortedPair(hrnet.out_dir, init_args={"width": width}, seed=seed % 7)
    x = random_input(seed, (batch, 3, 4 * quarter, 4 * quarter))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 2


@settings(max_examples=2, deadline=None)
@given(batch=st.integers(1, 2), quarter=st.integers(1, 4), width=st.integers(2, 5), seed=st.integers(0, 2**16))
def test_timm_style_high_resolution_module_matches_torch(timm_style, batch, quarter, width, seed):
    pair = PortedPair(timm_style.out_dir, init_args={"width": width}, seed=seed % 7)
    x = random_input(seed, (batch, 3, 4 * quarter, 4 * quarter))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 2


@settings(max_examples=2, deadline=None)
@given(batch=st.integers(1, 2), eighth=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_skips_pushed_and_popped_match_torch(skips, batch, eighth, seed):
    x = random_input(seed, (batch, 3, 8 * eighth, 8 * eighth))
    assert_same_outputs(skips, [x], tolerance=1e-5)
    code = (skips.out_dir / "op_model_keras.py").read_text()
    assert "skips += [x]" in code and "cat([x, skip], 3)" in code  # the skips stay channels-last


@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 3), size=st.integers(3, 9), seed=st.integers(0, 2**16))
def test_a_list_read_before_its_first_append_matches_torch(chain, batch, size, seed):
    assert_same_outputs(chain, [random_input(seed, (batch, 3, size, size))], tolerance=1e-5)


def test_items_converted_in_a_tuple_stay_a_tuple():
    """DLA's root: `torch.cat((x2, x1) + tuple(extra), dim=1)` with the list's images converted one by one: a tuple
    added to a tuple stays a tuple (a list comprehension there was a TypeError at run time)."""
    from porter.passes.calls import _converted_items

    assert _converted_items("f(_each)", "tuple(extra)") == "tuple(f(_each) for _each in tuple(extra))"
    assert _converted_items("f(_each)", "(a, b)") == "tuple(f(_each) for _each in (a, b))"
    assert _converted_items("f(_each)", "features") == "[f(_each) for _each in features]"
