"""A ConvNeXt-style net whose modules behave by what their constructor was handed (literal values stored on
self): a channel-mixing norm told its data format by a string, and a layout switch told its axis order by a
tuple; each instance runs in the layout its own values need."""

import torch
import torch.nn.functional as F
from torch import nn


class ChannelNorm(nn.Module):
    """LayerNorm over channels, for (N, H, W, C) or (N, C, H, W) tensors as `data_format` says."""

    def __init__(self, channels, eps=1e-6, data_format="channels_last"):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.eps = eps
        self.data_format = data_format
        self.channels = (channels,)

    def forward(self, x):
        if self.data_format == "channels_last":
            return F.layer_norm(x, self.channels, self.weight, self.bias, self.eps)
        mean = x.mean(1, keepdim=True)
        var = (x - mean).pow(2).mean(1, keepdim=True)
        x = (x - mean) / torch.sqrt(var + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class Reorder(nn.Module):
    def __init__(self, order):
        super().__init__()
        self.order = order

    def forward(self, x):
        """x with its dims in `order`.

        A view, as torch's permute is."""
        return x.permute(*self.order)


class MixBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.spatial = nn.Conv2d(width, width, 5, padding=2, groups=width)
        self.to_tokens = Reorder(order=(0, 2, 3, 1))
        self.norm = ChannelNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))
        self.to_maps = Reorder(order=(0, 3, 1, 2))

    def forward(self, x):
        y = self.to_tokens(self.spatial(x))
        y = self.mlp(self.norm(y))
        return x + self.to_maps(y)


class StaticArgsNet(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 12, 2, stride=2), ChannelNorm(12, data_format="channels_first"))
        self.blocks = nn.Sequential(MixBlock(12), MixBlock(12))
        self.down = nn.Sequential(ChannelNorm(12, 1e-5, "channels_first"), nn.Conv2d(12, 24, 2, stride=2))
        self.last = MixBlock(24)
        self.head = nn.Linear(24, classes)

    def forward(self, x):
        x = self.last(self.down(self.blocks(self.stem(x))))
        return self.head(x.mean(dim=(2, 3)))


if __name__ == "__main__":
    net = StaticArgsNet()
    print(net(torch.randn(2, 3, 16, 16)).shape)
