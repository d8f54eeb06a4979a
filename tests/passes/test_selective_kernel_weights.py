"""Selective-kernel attention (SKNet as commonly written): the branches' maps are stacked (B, M, C, H, W), the
branch weights viewed (B, M, C, 1, 1) (C read off the stack) and softmaxed over the branches, and the product summed over them. The
weights' view stores its size-1 dims where the layout put them, the branches another way, and the product ran in
torch's order (the branches transposed there and back). The weights' written 1s are size-1 dims, kept through the
softmax, and moving only them is a reshape: the weights come to the branches' order. Matches torch for drawn
sizes (odd ones, batch 1); the boundary's Transposes only."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class SKConv(nn.Module):
    def __init__(self, features, M=2, G=4, r=4, L=8):
        super().__init__()
        d = max(features // r, L)
        self.M, self.features = M, features
        self.convs = nn.ModuleList([nn.Sequential(
            nn.Conv2d(features, features, 3, padding=1 + i, dilation=1 + i, groups=G, bias=False),
            nn.BatchNorm2d(features), nn.ReLU(inplace=True)) for i in range(M)])
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Sequential(nn.Conv2d(features, d, 1, bias=False), nn.BatchNorm2d(d), nn.ReLU(inplace=True))
        self.fcs = nn.ModuleList([nn.Conv2d(d, features, 1) for _ in range(M)])
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        batch_size = x.shape[0]
        feats = torch.stack([conv(x) for conv in self.convs], dim=1)
        feats_U = torch.sum(feats, dim=1)
        feats_Z = self.fc(self.gap(feats_U))
        attention_vectors = torch.cat([fc(feats_Z) for fc in self.fcs], dim=1)
        attention_vectors = attention_vectors.view(batch_size, self.M, feats.shape[2], 1, 1)
        attention_vectors = self.softmax(attention_vectors)
        return torch.sum(feats * attention_vectors, dim=1)


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.sk = SKConv(16)
        self.head = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        return self.head(self.sk(self.stem(x)))
'''


# the branch weights from a global mean (no pooling layer), softmaxed by the function
MEAN_WEIGHTS = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.a = nn.Conv2d(3, c, 3, padding=1)
        self.b = nn.Conv2d(3, c, 3, padding=2, dilation=2)
        self.fc = nn.Conv2d(c, 2 * c, 1)
        self.out = nn.Conv2d(c, 3, 1)

    def forward(self, x):
        paths = torch.stack([self.a(x), self.b(x)], dim=1)
        attn = self.fc(paths.sum(1).mean((2, 3), keepdim=True))
        attn = torch.softmax(attn.view(x.shape[0], 2, paths.shape[2], 1, 1), dim=1)
        return self.out(torch.sum(paths * attn, dim=1))
'''


@pytest.fixture(scope="module", params=["sk_conv", "mean_weights"])
def pair(request, tmp_path_factory):
    source = SOURCE if request.param == "sk_conv" else MEAN_WEIGHTS
    return port(tmp_path_factory.mktemp("sk"), textwrap.dedent(source), input_specs=("3,9,11",))


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.sampled_from([5, 9]),
       width=st.sampled_from([7, 12]))
def test_selective_kernel_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])


def test_selective_kernel_keeps_images_channels_last(pair):
    x = random_input(0, (2, 3, 9, 11))
    assert_same_outputs(pair, [x], jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 2
