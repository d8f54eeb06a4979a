"""Channel shuffles written as a run of statements rebinding one name through views and permutes (megvii's
ShuffleNetV2: `x = x.reshape(b * c // 2, 2, h * w)`, `x = x.permute(1, 0, 2)`, `x = x.reshape(2, -1, c // 2, h,
w)`, then `x[0], x[1]`; torchvision's shuffle with method calls, `x = x.view(b, g, c // g, h, w)`, `x =
x.transpose(1, 2).contiguous()`, `x = x.view(b, -1, h, w)`): translated as one regrouping of the image as the port
holds it (passes/view_chains.py). Before, each view moved the image into torch's order and back (92 Transposes in
megvii's ShuffleNetV2 0.5x); now the ports match torch and trace only the boundary's.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import assert_matches_torch, snippet_ports
from tests.rules.op_ports import random_input

SOURCE = '''
import torch
import torch.nn as nn


def split_shuffle(x):
    batchsize, num_channels, height, width = x.data.size()
    x = x.reshape(batchsize * num_channels // 2, 2, height * width)
    x = x.permute(1, 0, 2)
    x = x.reshape(2, -1, num_channels // 2, height, width)
    return x[0], x[1]


def group_shuffle(x, groups):
    b, c, h, w = x.size()
    x = x.view(b, groups, c // groups, h, w)
    x = x.transpose(1, 2).contiguous()
    x = x.view(b, -1, h, w)
    return x


class Net(nn.Module):
    def __init__(self, how="split"):
        super().__init__()
        self.how = how
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.branch = nn.Conv2d(4, 4, 3, padding=1, groups=2)
        self.head = nn.Conv2d(8, 5, 1)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        if self.how == "split":
            kept, x = split_shuffle(x)
            x = torch.cat((kept, self.branch(x)), 1)
        else:
            x = group_shuffle(x, 4)
        return self.head(x)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return snippet_ports(tmp_path_factory, SOURCE, "3,6,7", "how")


@pytest.mark.parametrize("how", ["split", "group"])
@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), height=st.integers(1, 7), width=st.integers(1, 7), seed=st.integers(0, 2 ** 16))
def test_view_chains_match_torch(ported, how, batch, height, width, seed):
    assert_matches_torch(ported(how), seed, (batch, 3, height, width))


@pytest.mark.parametrize("how", ["split", "group"])
def test_view_chains_trace_only_the_boundary_transposes(ported, how):
    out = ported(how)
    assert "view_chain(" in (out / "op_model_keras.py").read_text()
    pair = PortedPair(out, seed=0)
    assert count_transposes(pair.keras_model, [random_input(0, (2, 3, 6, 7))]) <= 2


# Patch tokens out of an image and back (MobileViT's unfold and fold, written afresh): the unfold ends in tokens, not
# an image (taken as one regrouping into torch's order); the fold starts from tokens in torch's order and ends in an
# image (taken as one regrouping into an image held channels-last). Before, each step converted or transposed (9
# Transposes a block, 4 of them torch's own), now one each way.
PATCHES = '''
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class PatchMixer(nn.Module):
    def __init__(self, dim=6, patch=2):
        super().__init__()
        self.patch = patch
        self.local = nn.Conv2d(3, dim, 3, padding=1)
        self.mix = nn.Linear(dim, dim)
        self.proj = nn.Conv2d(dim, 4, 1)

    def forward(self, x):
        x = self.local(x)
        b, c, h, w = x.shape
        p = self.patch
        nh, nw = math.ceil(h / p), math.ceil(w / p)
        if nh * p != h or nw * p != w:
            x = F.interpolate(x, size=(nh * p, nw * p), mode="bilinear", align_corners=False)
        x = x.reshape(b * c * nh, p, nw, p).transpose(1, 2)
        x = x.reshape(b, c, nh * nw, p * p).transpose(1, 3).reshape(b * p * p, nh * nw, -1)
        x = x + self.mix(x)
        x = x.contiguous().view(b, p * p, nh * nw, -1)
        x = x.transpose(1, 3).reshape(b * c * nh, nw, p, p)
        x = x.transpose(1, 2).reshape(b, c, nh * p, nw * p)
        return self.proj(x)
'''


@pytest.fixture(scope="module")
def patch_port(tmp_path_factory):
    return snippet_ports(tmp_path_factory, PATCHES.replace("PatchMixer", "Net"), "3,8,8")("patches")


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 2), height=st.sampled_from([4, 5, 8]), width=st.sampled_from([2, 7, 10]),
       seed=st.integers(0, 2**16))
def test_patch_unfold_and_fold_match_torch(patch_port, batch, height, width, seed):
    assert_matches_torch(patch_port, seed, (batch, 3, height, width))


def test_patch_unfold_and_fold_transpose_once_each(patch_port):
    pair = PortedPair(patch_port, seed=0)
    code = (patch_port / "op_model_keras.py").read_text()
    assert code.count("view_chain(") == 2 and "to_channels_first" not in code
    # the input's and the output's, one for the unfold, one for the fold
    assert count_transposes(pair.keras_model, [random_input(0, (2, 3, 8, 8))]) <= 4
