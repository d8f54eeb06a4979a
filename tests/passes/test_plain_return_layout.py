"""A block whose returns disagree (`if return_map: return z, attention` / `return z`: the non-local block of
AlexHex7/Non-local_pytorch) is translated again returning everything in torch's layout; built once with literal
constructor arguments (a specialised call) and once generically, followed by a convolution.

What broke before: such a call keeps no return template (its returns are brought to torch's layout), and a body
whose every path returns was taken for one whose every path raises: its value took any layout, so the next
convolution got a torch-layout image unconverted, a shape error, or silently wrong numbers when the image is square
with as many channels as pixels per side. The ports match torch, eagerly and under XLA.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.passes.snippet_ports import assert_matches_torch, snippet_ports

SOURCE = '''
import torch
from torch import nn


class NonLocal(nn.Module):
    def __init__(self, c, sub_sample=True, scale=True):
        super().__init__()
        self.inner = c // 2
        self.g = nn.Conv2d(c, self.inner, 1)
        self.theta = nn.Conv2d(c, self.inner, 1)
        self.phi = nn.Conv2d(c, self.inner, 1)
        if sub_sample:
            self.g = nn.Sequential(self.g, nn.MaxPool2d(2))
            self.phi = nn.Sequential(self.phi, nn.MaxPool2d(2))
        self.scale = scale
        self.W = nn.Conv2d(self.inner, c, 1)

    def forward(self, x, return_map=False):
        b = x.size(0)
        g_x = self.g(x).view(b, self.inner, -1).permute(0, 2, 1)
        theta_x = self.theta(x).view(b, self.inner, -1).permute(0, 2, 1)
        phi_x = self.phi(x).view(b, self.inner, -1)
        f = torch.matmul(theta_x, phi_x)
        if self.scale:
            f = f / f.size(-1)
        y = torch.matmul(f, g_x).permute(0, 2, 1).contiguous()
        y = y.view(b, self.inner, *x.size()[2:])
        z = self.W(y) + x
        if return_map:
            return z, f
        return z


class Net(nn.Module):
    def __init__(self, c=8, sub_sample=True):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.first = NonLocal(c, sub_sample=sub_sample)
        self.second = NonLocal(c, sub_sample=False, scale=False)
        self.head = nn.Conv2d(c, 5, 1)

    def forward(self, x):
        z, f = self.first(self.stem(x), return_map=True)
        return self.head(self.second(z)), f.mean(-1)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """sub_sample -> output folder of the port built with it."""
    return snippet_ports(tmp_path_factory, SOURCE, "3,8,8", "sub_sample")


@settings(max_examples=4, deadline=None)
@given(sub_sample=st.booleans(), batch=st.integers(1, 2), size=st.sampled_from([4, 6, 8]), seed=st.integers(0, 2**16))
def test_blocks_returning_in_torch_layout_match_torch(ported, sub_sample, batch, size, seed):
    assert_matches_torch(ported(sub_sample), seed, (batch, 3, size, size))


def test_a_square_image_with_as_many_channels_matches(ported):
    for sub_sample in (False, True):
        assert_matches_torch(ported(sub_sample), 3, (2, 3, 8, 8))
