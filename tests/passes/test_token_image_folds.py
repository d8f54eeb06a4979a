"""Tokens folded back into an image inside a block (a hybrid vision transformer's depthwise-conv MLP and its
spatial-reduction attention, timm pvt_v2 / SegFormer style: `B, N, C = x.shape; x.transpose(1, 2).view(B, C, H, W)`,
a conv, then `flatten(2).transpose(1, 2)`) are held channels-last where they lie: the tokens (B, N, C) are already
(B, H, W, C), so the fold is a reshape. `C` read off the tokens marks the channels (porter/ir/values.py
`features_dim`); before, the view was taken for a split of the channels into groups and the depthwise conv paid a
transpose each side (timm pvt_v2 21 -> 3 Transposes). A block class whose forward first transposes the tokens it is
handed (SegFormer's DWConv) takes them as they lie: its caller converted them to "channels-last" before, for the conv
the block reaches only after the fold (held-out SegFormer 10 -> 2). Sizes drawn by hypothesis (batch 1, odd sizes); compared
eagerly and under XLA."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs, random_input

SOURCE = '''
import torch
import torch.nn as nn


class DWMlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.dwconv = nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x, feat_size):
        x = self.fc1(x)
        B, N, C = x.shape
        x = x.transpose(1, 2).view(B, C, feat_size[0], feat_size[1])
        x = self.dwconv(x)
        x = x.flatten(2).transpose(1, 2)
        return self.fc2(torch.relu(x))


class DWConv(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 3, 1, 1, groups=dim)

    def forward(self, x, H, W):
        B, N, C = x.shape
        x = x.transpose(1, 2).view(B, C, H, W)
        x = self.dwconv(x)
        return x.flatten(2).transpose(1, 2)


class ReducedAttention(nn.Module):
    def __init__(self, dim, heads, sr_ratio):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, dim * 2)
        self.sr = nn.Conv2d(dim, dim, sr_ratio, stride=sr_ratio)
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, H, W):
        B, N, C = x.shape
        q = self.q(x).reshape(B, N, self.heads, C // self.heads).permute(0, 2, 1, 3)
        x_ = x.permute(0, 2, 1).reshape(B, C, H, W)
        x_ = self.sr(x_).reshape(B, C, -1).permute(0, 2, 1)
        x_ = self.norm(x_)
        kv = self.kv(x_).reshape(B, -1, 2, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        k, v = kv[0], kv[1]
        attn = (q @ k.transpose(-2, -1)) * (C // self.heads) ** -0.5
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Net(nn.Module):
    def __init__(self, how="mlp"):
        super().__init__()
        self.how = how
        self.embed = nn.Conv2d(3, 8, 2, stride=2)
        self.mlp = DWMlp(8, 12)
        self.attn = ReducedAttention(8, 2, 2)
        self.dw = DWConv(8)

    def forward(self, x):
        x = self.embed(x)
        B, C, H, W = x.shape
        x = x.flatten(2).transpose(1, 2)
        if self.how == "mlp":
            x = x + self.mlp(x, (H, W))
        elif self.how == "block":
            x = x + self.dw(x, H, W)
        else:
            x = x + self.attn(x, H, W)
        return x.transpose(1, 2).reshape(B, C, H, W)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    ports = snippet_ports(tmp_path_factory, SOURCE, "3,8,12", "how")
    return lambda how: PortedPair(ports(how), seed=1)


@pytest.mark.parametrize("how", ["mlp", "attention", "block"])
@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 2), height=st.sampled_from([4, 8, 12]), width=st.sampled_from([4, 12, 20]),
       seed=st.integers(0, 2**16))
def test_tokens_fold_into_an_image_where_they_lie(ported, how, batch, height, width, seed):
    pair, x = ported(how), random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 2  # the boundary's two: none around the block's conv
