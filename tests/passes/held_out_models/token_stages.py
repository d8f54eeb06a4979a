"""Pooling-transformer stages in the PiT manner: each stage takes and returns an (image, class tokens) pair through
a Sequential subclass's loop, pools the image with a strided depthwise conv (the tokens with a Linear), flattens it
into tokens beside the class tokens, runs them through an optional norm (`norm_layer(dim) if norm_layer else
nn.Identity()`: a module porter cannot type) and a Sequential of pre-norm attention blocks, and folds the tokens back
into an image. The blocks' MLP is built from `partial(nn.Conv2d, kernel_size=1) if use_conv else nn.Linear`, so a
convolution lies inside the blocks though they only ever see token sequences."""
from functools import partial
from typing import Tuple

import torch
import torch.nn as nn


class Mlp(nn.Module):
    def __init__(self, dim, hidden, use_conv=False):
        super().__init__()
        layer = partial(nn.Conv2d, kernel_size=1) if use_conv else nn.Linear
        self.fc1 = layer(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = layer(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        attn = (q @ k.transpose(-2, -1) * self.scale).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(B, N, C))


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=2.0, norm_layer=nn.LayerNorm):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Pool(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride=2, padding=1, groups=cin)
        self.fc = nn.Linear(cin, cout)

    def forward(self, x, cls_token):
        return self.conv(x), self.fc(cls_token)


class Stage(nn.Module):
    def __init__(self, dim, heads, depth, pool=None, norm_layer=None):
        super().__init__()
        self.pool = pool
        self.norm = norm_layer(dim) if norm_layer else nn.Identity()
        self.blocks = nn.Sequential(*[Block(dim, heads, norm_layer=partial(nn.LayerNorm, eps=1e-6))
                                      for _ in range(depth)])

    def forward(self, x: Tuple[torch.Tensor, torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
        x, cls_tokens = x
        count = cls_tokens.shape[1]
        if self.pool is not None:
            x, cls_tokens = self.pool(x, cls_tokens)
        B, C, H, W = x.shape
        x = torch.cat((cls_tokens, x.flatten(2).transpose(1, 2)), dim=1)
        x = self.blocks(self.norm(x))
        cls_tokens, x = x[:, :count], x[:, count:]
        return x.transpose(1, 2).reshape(B, C, H, W), cls_tokens


class StageSequence(nn.Sequential):
    def forward(self, x: Tuple[torch.Tensor, torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
        for stage in self:
            x = stage(x)
        return x


class TokenPoolNet(nn.Module):
    def __init__(self, dims=(8, 16), heads=(2, 2), depths=(1, 2), num_classes=5):
        super().__init__()
        self.stem = nn.Conv2d(3, dims[0], 4, stride=2)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dims[0]))
        stages = []
        for i, dim in enumerate(dims):
            pool = Pool(dims[i - 1], dim) if i > 0 else None
            stages += [Stage(dim, heads[i], depths[i], pool=pool)]
        self.stages = StageSequence(*stages)
        self.norm = nn.LayerNorm(dims[-1])
        self.head = nn.Linear(dims[-1], num_classes)

    def forward(self, x):
        x = self.stem(x)
        cls_tokens = self.cls_token.expand(x.shape[0], -1, -1)
        x, cls_tokens = self.stages((x, cls_tokens))
        return self.head(self.norm(cls_tokens)[:, 0])
