"""Layers an if/elif chooses by a `dimension` argument (the non-local block every video and segmentation codebase
copies: `conv_nd, pool, bn = nn.Conv2d, nn.MaxPool2d(2), nn.BatchNorm2d` when `dimension == 2`, Conv1d or Conv3d
otherwise), built by thin subclasses (`NonLocal2D` hands `dimension=2` to the base class).

Before: the tuple-bound classes were taken for module instances, so the constructor called `call_module(conv_nd,
channels, ...)` and the port failed to build; bound one by one, the branches picked the last (Conv1d, MaxPool1d),
the block's first layer said rank 3 (or 5), and every layer went through `call_module` in torch's order: 16
Transposes in the original repository's MNIST network. Now the alternatives are kept, each call runs the one its
input's rank fits, and a module that is one of several rank-keeping layers hands back the rank it takes: the 2-D
block runs channels-last throughout (the boundary's two Transposes only); the 1-D one matches torch. A local
response norm choosing an AvgPool3d or an AvgPool2d by a flag (pretrainedmodels' VGG-M) runs the 3-D pool on its
unsqueezed image as it lies (a first version left the call to `call_module`: 3 Transposes more).
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import assert_matches_torch, snippet_ports
from tests.rules.op_ports import random_input

SOURCE = '''
import torch
from torch import nn
from torch.nn import functional as F


class NonLocalND(nn.Module):
    """Embedded-Gaussian non-local block; the layers are chosen by `dimension` (1, 2 or 3)."""

    def __init__(self, channels, dimension=3, sub_sample=True):
        super().__init__()
        self.inner = max(channels // 2, 1)
        if dimension == 3:
            conv_nd, pool, bn = nn.Conv3d, nn.MaxPool3d(kernel_size=(1, 2, 2)), nn.BatchNorm3d
        elif dimension == 2:
            conv_nd, pool, bn = nn.Conv2d, nn.MaxPool2d(kernel_size=2), nn.BatchNorm2d
        else:
            conv_nd, pool, bn = nn.Conv1d, nn.MaxPool1d(kernel_size=2), nn.BatchNorm1d
        self.g = conv_nd(channels, self.inner, kernel_size=1)
        self.theta = conv_nd(channels, self.inner, kernel_size=1)
        self.phi = conv_nd(channels, self.inner, kernel_size=1)
        self.W = nn.Sequential(conv_nd(self.inner, channels, kernel_size=1), bn(channels))
        if sub_sample:
            self.g = nn.Sequential(self.g, pool)
            self.phi = nn.Sequential(self.phi, pool)

    def forward(self, x):
        b = x.size(0)
        g_x = self.g(x).view(b, self.inner, -1).permute(0, 2, 1)
        theta_x = self.theta(x).view(b, self.inner, -1).permute(0, 2, 1)
        phi_x = self.phi(x).view(b, self.inner, -1)
        attention = F.softmax(torch.matmul(theta_x, phi_x), dim=-1)
        y = torch.matmul(attention, g_x).permute(0, 2, 1).contiguous()
        y = y.view(b, self.inner, *x.size()[2:])
        return self.W(y) + x


class NonLocal2D(NonLocalND):
    def __init__(self, channels, sub_sample=True):
        super().__init__(channels, dimension=2, sub_sample=sub_sample)


class NonLocal1D(NonLocalND):
    def __init__(self, channels, sub_sample=True):
        super().__init__(channels, dimension=1, sub_sample=sub_sample)


class Net(nn.Module):
    def __init__(self, dims=2):
        super().__init__()
        conv = nn.Conv2d if dims == 2 else nn.Conv1d
        self.stem = conv(3, 8, 3, padding=1)
        self.block = NonLocal2D(8) if dims == 2 else NonLocal1D(8)
        self.head = conv(8, 4, 3, padding=1, stride=2)

    def forward(self, x):
        return self.head(self.block(torch.relu(self.stem(x))))
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """dims -> output folder of the snippet's port."""
    images, sequences = (snippet_ports(tmp_path_factory, SOURCE, spec, "dims") for spec in ("3,6,8", "3,10"))
    return lambda dims: images(dims) if dims == 2 else sequences(dims)


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), height=st.integers(2, 7), width=st.integers(2, 7), seed=st.integers(0, 2 ** 16))
def test_two_dimensional_non_local_block_matches_torch(ported, batch, height, width, seed):
    assert_matches_torch(ported(2), seed, (batch, 3, height, width))


def test_two_dimensional_non_local_block_runs_channels_last(ported):
    pair = PortedPair(ported(2), seed=0)
    assert count_transposes(pair.keras_model, [random_input(0, (2, 3, 6, 8))]) <= 2


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(2, 11), seed=st.integers(0, 2 ** 16))
def test_one_dimensional_non_local_block_matches_torch(ported, batch, length, seed):
    assert_matches_torch(ported(1), seed, (batch, 3, length))


LRN_SOURCE = '''
import torch
import torch.nn as nn


class CrossMapNorm(nn.Module):
    def __init__(self, size=5, alpha=1e-3, beta=0.75, k=2.0, across_channels=True):
        super().__init__()
        self.across_channels = across_channels
        if across_channels:
            self.average = nn.AvgPool3d(kernel_size=(size, 1, 1), stride=1, padding=((size - 1) // 2, 0, 0))
        else:
            self.average = nn.AvgPool2d(kernel_size=size, stride=1, padding=(size - 1) // 2)
        self.alpha, self.beta, self.k = alpha, beta, k

    def forward(self, x):
        if self.across_channels:
            div = self.average(x.pow(2).unsqueeze(1)).squeeze(1)
        else:
            div = self.average(x.pow(2))
        return x.div(div.mul(self.alpha).add(self.k).pow(self.beta))


class Net(nn.Module):
    def __init__(self, across=True):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.norm = CrossMapNorm(across_channels=across)
        self.head = nn.Conv2d(8, 4, 3, stride=2)

    def forward(self, x):
        return self.head(self.norm(torch.relu(self.conv(x))))
'''


@pytest.fixture(scope="module")
def norm_ports(tmp_path_factory):
    return snippet_ports(tmp_path_factory, LRN_SOURCE, "3,7,9", "across")


@pytest.mark.parametrize("across", [True, False])
@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 3), height=st.integers(3, 8), width=st.integers(3, 8), seed=st.integers(0, 2 ** 16))
def test_pool_chosen_by_rank_matches_torch(norm_ports, across, batch, height, width, seed):
    assert_matches_torch(norm_ports(across), seed, (batch, 3, height, width))


@pytest.mark.parametrize("across", [True, False])
def test_pool_chosen_by_rank_runs_on_the_image_as_it_lies(norm_ports, across):
    pair = PortedPair(norm_ports(across), seed=0)
    assert count_transposes(pair.keras_model, [random_input(0, (2, 3, 7, 9))]) <= 2
