"""Modules porter does not know statically, laid out for the whole model: a container that each branch of an if/else
appends its own child to (HRNet's transition layers: a conv Sequential, an Identity or a stack of strided convs), a
block class chosen from a module-level dict (`BLOCKS_DICT[name]`), a helper returning several modules (or None), a
child reached through `getattr(self, 'level{}'.format(i))` (DLA), a wrapper handed a different module per
construction (`Residual(fn)`). Each is one of a known set of modules: when they all take and return one layout, the
call is a plain channels-last call (no Transpose beyond the boundary's); the port matches torch (eager and XLA) and
real mxnet 1.9.1.

Each snippet is the construct as held-out model code writes it (GluonCV's HRNet and DLA, vit-pytorch's TwinsSVT),
cut down to a few layers.
"""

import numpy as np
import pytest

from porter.verify.harness import count_transposes
from tests.mxnet.gluon_fixtures import needs_mxnet, port_gluon_snippet
from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

HEADER = '''
import torch
import torch.nn as nn


class ConvBn(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride, 1)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class Wide(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1, stride)

    def forward(self, x):
        return self.conv(x) * 0.5
'''

SOURCES = {
    # HRNet: `_make_transition_layer` fills a list in a loop, each branch appending its own child; the block class
    # comes from a module-level dict; `_make_head` returns several modules, `_make_fuse` None for one branch
    "branch_appended": HEADER + '''

BLOCKS = {"CONV": ConvBn, "WIDE": Wide}


class Net(nn.Module):
    def __init__(self, kind="CONV"):
        super().__init__()
        block = BLOCKS[kind]
        self.stem = block(3, 4)
        self.transitions = self._make_transition([4, 4], [4, 6, 6])
        self.head, self.tail = self._make_head(6)
        self.fuse = self._make_fuse(1)

    def _make_transition(self, pre, cur):
        layers = []
        for i in range(len(cur)):
            if i < len(pre):
                if cur[i] != pre[i]:
                    layers.append(nn.Sequential(nn.Conv2d(pre[i], cur[i], 3, 1, 1), nn.BatchNorm2d(cur[i]),
                                                nn.ReLU()))
                else:
                    layers.append(nn.Identity())
            else:
                stack = []
                for _ in range(i + 1 - len(pre)):
                    stack.append(nn.Sequential(nn.Conv2d(pre[-1], cur[i], 3, 1, 1), nn.ReLU()))
                layers.append(nn.Sequential(*stack))
        return nn.ModuleList(layers)

    def _make_head(self, channels):
        return nn.Conv2d(channels, 8, 1), nn.BatchNorm2d(8)

    def _make_fuse(self, branches):
        if branches > 1:
            return None
        return nn.Sequential(nn.Conv2d(4, 6, 1), nn.BatchNorm2d(6))

    def forward(self, x):
        x = self.stem(x)
        a = self.transitions[0](x)
        b = self.transitions[1](x)
        c = self.transitions[2](x)
        y = self.tail(self.head(b + c + self.fuse(a)))
        return y.mean([2, 3])
''',
    # DLA: the levels are reached by name pattern; a wrapper holds a different module per construction
    "named_and_wrapped": HEADER + '''

class Residual(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x) + x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.level0 = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4))
        self.level1 = ConvBn(4, 4)
        self.level2 = Residual(ConvBn(4, 4))
        self.level3 = Residual(nn.Conv2d(4, 4, 3, padding=1, groups=4))
        self.level4 = Residual(Wide(4, 4))

    def forward(self, x):
        for i in range(5):
            x = getattr(self, 'level{}'.format(i))(x)
        return x.mean([2, 3])
''',
}

# constructs the port must run right, converting where lists of images pass between blocks: HRNet's stage takes the
# further branches as `*args` and returns `[x]` for one branch, the list it filled for more
CONVERTING = {
    "starred_stage": HEADER + """

class Stage(nn.Module):
    def __init__(self, branches):
        super().__init__()
        self.branches = nn.ModuleList([nn.Conv2d(4, 4, 3, padding=1) for _ in range(branches)])

    def forward(self, x, *rest):
        x = self.branches[0](x)
        if len(self.branches) == 1:
            return [x]
        out = [x]
        for i in range(1, len(self.branches)):
            out.append(self.branches[i](rest[i - 1]))
        return out


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.one = Stage(1)
        self.two = Stage(2)

    def forward(self, x):
        x = self.stem(x)
        ys = self.one(x)
        ys = self.two(*[ys[0], x])
        return (ys[0] + ys[1]).mean([2, 3])
""",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {**SOURCES, **CONVERTING})


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_construct_matches_torch_and_converts_only_at_the_boundary(ported, name):
    pair = ported(name)
    x = random_input(0, (2, 3, 8, 8))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 2


@pytest.mark.parametrize("name", sorted(CONVERTING))
def test_construct_matches_torch(ported, name):
    pair = ported(name)
    x = random_input(0, (2, 3, 8, 8))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)


GLUON_SOURCE = '''
from mxnet.gluon import nn
from mxnet.gluon.contrib.nn import Identity


class ConvBlock(nn.HybridBlock):
    def __init__(self, channels, **kwargs):
        super(ConvBlock, self).__init__(**kwargs)
        self.body = nn.HybridSequential()
        self.body.add(nn.Conv2D(channels, 3, 1, 1, use_bias=False), nn.BatchNorm(), nn.Activation('relu'))

    def hybrid_forward(self, F, x):
        return self.body(x)


class WideBlock(nn.HybridBlock):
    def __init__(self, channels, **kwargs):
        super(WideBlock, self).__init__(**kwargs)
        self.conv = nn.Conv2D(channels, 1)

    def hybrid_forward(self, F, x):
        return F.relu(self.conv(x))


BLOCKS_DICT = {'CONV': ConvBlock, 'WIDE': WideBlock}


class TransitionNet(nn.HybridBlock):
    def __init__(self, kind='CONV', classes=10, **kwargs):
        super(TransitionNet, self).__init__(**kwargs)
        block = BLOCKS_DICT[kind]
        self.stem = self._make_layer(block, 4, 2)
        self.transition = self._make_transition_layer([4, 4], [4, 6, 6])
        self.head, self.classifier = self._make_head(classes)

    def _make_layer(self, block, channels, blocks):
        layers = nn.HybridSequential()
        for _ in range(blocks):
            layers.add(block(channels))
        return layers

    def _make_transition_layer(self, pre, cur):
        transition_layers = nn.HybridSequential()
        for i in range(len(cur)):
            if i < len(pre):
                if cur[i] != pre[i]:
                    layer = nn.HybridSequential()
                    layer.add(nn.Conv2D(cur[i], 3, 1, 1, use_bias=False), nn.BatchNorm(), nn.Activation('relu'))
                    transition_layers.add(layer)
                else:
                    transition_layers.add(Identity())
            else:
                stack = nn.HybridSequential()
                for j in range(i + 1 - len(pre)):
                    cba = nn.HybridSequential()
                    cba.add(nn.Conv2D(cur[i], 3, 2, 1, use_bias=False), nn.BatchNorm(), nn.Activation('relu'))
                    stack.add(cba)
                transition_layers.add(stack)
        return transition_layers

    def _make_head(self, classes):
        head = nn.HybridSequential()
        head.add(nn.Conv2D(8, 1), nn.BatchNorm(), nn.GlobalAvgPool2D())
        return head, nn.Dense(classes)

    def hybrid_forward(self, F, x):
        x = self.stem(x)
        a = self.transition[0](x)
        b = self.transition[1](x)
        c = self.transition[2](x)
        y = F.concat(a, b, dim=1)
        y = F.slice_axis(F.Pooling(y, kernel=(2, 2), stride=(2, 2), pool_type='max'), axis=1, begin=4, end=10) + c
        return self.classifier(self.head(y))
'''


@needs_mxnet
def test_gluon_transition_layers_match_mxnet_without_transposes(tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    model = port_gluon_snippet(tmp_path, GLUON_SOURCE, "TransitionNet", x)
    assert count_transposes(model, [x]) <= 2
