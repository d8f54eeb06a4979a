"""One Mlp class used in two layouts: inside conv blocks on a channels-last image between `permute(0, 2, 3, 1)` and
`permute(0, 3, 1, 2)` (ConvNeXt style), and inside attention blocks on (batch, tokens, channels) sequences after
`x.flatten(2).transpose(1, 2)` (`nn.MultiheadAttention(batch_first=True)`): each call site gets the class laid out
for what it holds, no conversion."""
import torch
import torch.nn as nn


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class ConvBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, 2 * dim)

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.mlp(self.norm(y)).permute(0, 3, 1, 2)
        return x + y


class TokenBlock(nn.Module):
    def __init__(self, dim, heads=2):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, 2 * dim)

    def forward(self, t):
        h = self.norm1(t)
        t = t + self.attn(h, h, h, need_weights=False)[0]
        return t + self.mlp(self.norm2(t))


class HybridMlpNet(nn.Module):
    def __init__(self, dim=16, num_classes=4):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, 4, stride=4)
        self.conv_blocks = nn.Sequential(ConvBlock(dim), ConvBlock(dim))
        self.token_blocks = nn.ModuleList([TokenBlock(dim) for _ in range(2)])
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = self.conv_blocks(self.patch(x))
        b, c, h, w = x.shape
        t = x.flatten(2).transpose(1, 2)
        for blk in self.token_blocks:
            t = blk(t)
        return self.head(t.mean(1))
