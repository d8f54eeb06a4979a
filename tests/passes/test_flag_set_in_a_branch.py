"""A flag set to a literal in one branch and read by a later `if` (timm's MobileVitBlock: `interpolate = False`,
`if new_h != H: x = F.interpolate(...); interpolate = True`, then after the unfold/fold `if interpolate: x =
F.interpolate(...)`). The join kept the one path's `True`, so the later `if` was taken as always holding: only its
branch's layout (channels-last) was carried past it, and the path not taking it handed a torch-layout image to the
next conv (mobilevit.py's port raised). Two paths binding different literals leave a run-time value
(passes/statements.py `_literals_disagree`). Compared with real torch on sizes that take both paths."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import math

import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self, channels=4, patch=2):
        super().__init__()
        self.conv_kxk = nn.Conv2d(3, channels, 3, padding=1)
        self.conv_1x1 = nn.Conv2d(channels, channels, 1)
        self.norm = nn.LayerNorm(channels)
        self.conv_proj = nn.Conv2d(channels, channels, 1)
        self.patch_size = (patch, patch)
        self.patch_area = patch * patch

    def forward(self, x):
        x = self.conv_1x1(self.conv_kxk(x))
        patch_h, patch_w = self.patch_size
        B, C, H, W = x.shape
        new_h, new_w = math.ceil(H / patch_h) * patch_h, math.ceil(W / patch_w) * patch_w
        num_patch_h, num_patch_w = new_h // patch_h, new_w // patch_w
        num_patches = num_patch_h * num_patch_w
        interpolate = False
        if new_h != H or new_w != W:
            x = F.interpolate(x, size=(new_h, new_w), mode="bilinear", align_corners=False)
            interpolate = True
        # unfold into patches, a token norm, fold back (MobileViT's)
        x = x.reshape(B * C * num_patch_h, patch_h, num_patch_w, patch_w).transpose(1, 2)
        x = x.reshape(B, C, num_patches, self.patch_area).transpose(1, 3).reshape(B * self.patch_area, num_patches, -1)
        x = self.norm(x)
        x = x.contiguous().view(B, self.patch_area, num_patches, -1)
        x = x.transpose(1, 3).reshape(B * C * num_patch_h, num_patch_w, patch_h, patch_w)
        x = x.transpose(1, 2).reshape(B, C, num_patch_h * patch_h, num_patch_w * patch_w)
        if interpolate:
            x = F.interpolate(x, size=(H, W), mode="bilinear", align_corners=False)
        return self.conv_proj(x)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("flag"), textwrap.dedent(SOURCE), input_specs=("3,8,8",))


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.sampled_from([1, 2]), size=st.sampled_from([7, 8, 9]))
def test_both_paths_match_torch(pair, seed, batch, size):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, size, size))], tolerance=1e-4)
