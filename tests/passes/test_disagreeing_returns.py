"""A block whose forward returns a tuple for some instances and a tensor for others, chosen by a constructor flag
(pytorchcv's PreConvBlock: `if self.return_preact: return x, x_pre_activ` else `return x`), built through a factory
function (`pre_conv3x3_block(..., return_preact=True)`) so no call site knows the flag statically; and a unit whose
body is one of two such blocks (`self.body = Bottleneck(...) if bottleneck else Block(...)`) unpacking the tuple
the body returns through `call_module`.

No one output template fits both returns: the class is translated again returning everything in torch's layout,
and a tuple an opaque module returns reaches the caller with its images in torch's layout, which is how the caller
unpacks it. Before, the tensor return came back channels-first beside a channels-last tuple (the block's residual
sum mixed layouts: a shape error, or silently wrong numbers for a square image with as many channels as pixels
per side). The ports match torch, eagerly and under XLA, for drawn sizes, batches and weights.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import assert_matches_torch, snippet_ports
from tests.rules.op_ports import assert_same_outputs, random_input

SOURCE = '''
import torch
from torch import nn


class PreConv(nn.Module):
    def __init__(self, cin, cout, stride=1, return_preact=False):
        super().__init__()
        self.bn = nn.BatchNorm2d(cin)
        self.conv = nn.Conv2d(cin, cout, 3, stride=stride, padding=1)
        self.return_preact = return_preact

    def forward(self, x):
        x = torch.relu(self.bn(x))
        if self.return_preact:
            x_pre_activ = x
        x = self.conv(x)
        if self.return_preact:
            return x, x_pre_activ
        else:
            return x


def pre_conv3x3(cin, cout, **kwargs):
    return PreConv(cin, cout, **kwargs)


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = pre_conv3x3(cin, cout, stride=stride, return_preact=True)
        self.conv2 = pre_conv3x3(cout, cout)

    def forward(self, x):
        x, x_pre_activ = self.conv1(x)
        x = self.conv2(x)
        return x, x_pre_activ


class Bottleneck(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = pre_conv3x3(cin, cout, return_preact=True)
        self.conv2 = pre_conv3x3(cout, cout, stride=stride)
        self.conv3 = pre_conv3x3(cout, cout)

    def forward(self, x):
        x, x_pre_activ = self.conv1(x)
        x = self.conv2(x)
        x = self.conv3(x)
        return x, x_pre_activ


class Unit(nn.Module):
    def __init__(self, cin, cout, stride, bottleneck):
        super().__init__()
        self.resize_identity = cin != cout or stride != 1
        self.body = Bottleneck(cin, cout, stride) if bottleneck else Block(cin, cout, stride)
        if self.resize_identity:
            self.identity_conv = nn.Conv2d(cin, cout, 1, stride=stride)

    def forward(self, x):
        identity = x
        x, x_pre_activ = self.body(x)
        if self.resize_identity:
            identity = self.identity_conv(x_pre_activ)
        return x + identity


class Net(nn.Module):
    def __init__(self, width=4, bottleneck=False, num_classes=3):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.units = nn.Sequential(Unit(width, width, 1, bottleneck), Unit(width, 2 * width, 2, bottleneck))
        self.head = nn.Linear(2 * width, num_classes)

    def forward(self, x):
        return self.head(self.units(self.stem(x)).mean((2, 3)))
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """bottleneck flag -> output folder of the port built with it."""
    return snippet_ports(tmp_path_factory, SOURCE, "3,8,8", "bottleneck")


@settings(max_examples=3, deadline=None)
@given(bottleneck=st.booleans(), batch=st.integers(1, 2), size=st.sampled_from([4, 5, 7, 8]),
       seed=st.integers(0, 2**16))
def test_blocks_returning_a_tuple_or_a_tensor_match_torch(ported, bottleneck, batch, size, seed):
    assert_matches_torch(ported(bottleneck), seed, (batch, 3, size, size))


def test_a_square_image_with_as_many_channels_is_not_silently_wrong(ported):
    """width 4 and 4x4 images after the stride-2 unit: a layout mix-up would add, not fail."""
    pair = PortedPair(ported(False), seed=3)
    assert np.isfinite(assert_same_outputs(pair, [random_input(3, (2, 3, 8, 8))], tolerance=1e-4))
