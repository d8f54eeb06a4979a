"""Stages passing an (image, token) pair through a Sequential subclass's loop, PiT-style: each stage is declared to
take and return `Tuple[torch.Tensor, torch.Tensor]` and is reached only through the container, so the pair's kind
comes from the declaration; and a cascaded group attention in the EfficientViT manner, whose conv-norm units are
nn.Sequential subclasses registering their children as attributes, guarded by `x.device.type != "meta"`."""
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBN(nn.Sequential):
    def __init__(self, cin, cout, kernel=1, stride=1, groups=1):
        super().__init__()
        self.c = nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(cout)


class PairSequential(nn.Sequential):
    def forward(self, x: Tuple[torch.Tensor, torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
        for stage in self:
            x = stage(x)
        return x


class Stage(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv = ConvBN(cin, cout, 3, stride)
        self.token = nn.Linear(cin, cout)

    def forward(self, x: Tuple[torch.Tensor, torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
        image, token = x
        token = self.token(token)
        image = F.relu(self.conv(image)) + token[:, :, None, None]
        return image, token


class CascadedAttention(nn.Module):
    def __init__(self, dim, key_dim=4, heads=2):
        super().__init__()
        self.key_dim, self.head_dim = key_dim, dim // heads
        self.qkvs = nn.ModuleList([ConvBN(self.head_dim, 2 * key_dim + self.head_dim) for _ in range(heads)])
        self.dws = nn.ModuleList([ConvBN(key_dim, key_dim, 3, groups=key_dim) for _ in range(heads)])
        self.proj = ConvBN(dim, dim)

    def forward(self, x):
        B, C, H, W = x.shape
        chunks = x.chunk(len(self.qkvs), dim=1)
        outs = []
        feat = chunks[0]
        for i, (qkv, dw) in enumerate(zip(self.qkvs, self.dws)):
            if i > 0:
                feat = feat + chunks[i]
            q, k, v = qkv(feat).view(B, -1, H, W).split([self.key_dim, self.key_dim, self.head_dim], dim=1)
            q = dw(q).flatten(2)
            k, v = k.flatten(2), v.flatten(2)
            if x.device.type != "meta":
                attn = (q.transpose(-2, -1) @ k * self.key_dim ** -0.5).softmax(dim=-1)
            else:
                attn = q.transpose(-2, -1) @ k
            feat = (v @ attn.transpose(-2, -1)).view(B, self.head_dim, H, W)
            outs.append(feat)
        return self.proj(F.relu(torch.cat(outs, 1)))


class PairNet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.stem = ConvBN(3, 8, 3, 2)
        self.token = nn.Parameter(torch.zeros(1, 8))
        self.stages = PairSequential(Stage(8, 16, 2), Stage(16, 16, 1))
        self.attn = CascadedAttention(16)
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = F.relu(self.stem(x))
        x, token = self.stages((x, self.token.expand(x.shape[0], -1)))
        x = x + self.attn(x)
        return self.fc(torch.cat([x.mean((2, 3)), token], 1))
