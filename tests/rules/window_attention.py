"""A small Swin-style network (source for tests/rules/test_window_attention.py): a patch-embedding Conv2d, a
`Permute` module to (B, H, W, C), LayerNorm, `F.pad` of the (B, H, W, C) map to whole windows, a window partition
(view + permute), multi-head attention whose q, k, v are read from one pending permute (`qkv[0]`), the reverse
partition, a crop, then back to (B, C, H, W) for pooling. Stages are appended to a list in a loop after the stem."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Permute(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        return torch.permute(x, self.dims)


def window_attention(x, qkv, proj, heads, window):
    B, H, W, C = x.shape
    pad_b = (window - H % window) % window
    pad_r = (window - W % window) % window
    x = F.pad(x, (0, 0, 0, pad_r, 0, pad_b))
    _, pH, pW, _ = x.shape
    x = x.view(B, pH // window, window, pW // window, window, C)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(-1, window * window, C)
    q, k, v = qkv(x).reshape(x.size(0), x.size(1), 3, heads, C // heads).permute(2, 0, 3, 1, 4)
    attn = (q * (C // heads) ** -0.5) @ k.transpose(-2, -1)
    x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(x.size(0), x.size(1), C)
    x = proj(x)
    x = x.view(B, pH // window, pW // window, window, window, C)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(B, pH, pW, C)
    return x[:, :H, :W, :]


class Block(nn.Module):
    def __init__(self, dim, heads=2, window=2):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.heads, self.window = heads, window

    def forward(self, x):
        return x + window_attention(self.norm(x), self.qkv, self.proj, self.heads, self.window)


class WindowNet(nn.Module):
    def __init__(self, dim=8, depth=2, classes=5):
        super().__init__()
        layers = [nn.Sequential(nn.Conv2d(3, dim, 2, stride=2), Permute([0, 2, 3, 1]), nn.LayerNorm(dim))]
        for _ in range(depth):
            layers.append(Block(dim))
        self.features = nn.Sequential(*layers)
        self.permute = Permute([0, 3, 1, 2])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.permute(self.features(x))
        return self.head(torch.flatten(self.pool(x), 1))
