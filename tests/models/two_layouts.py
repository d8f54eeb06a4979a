"""One module class used in two layouts: a drop-path block after convolutions (images, channels-last inside the
port) and after a token MLP working on (N, H, W, C) tensors in torch's own order; each instance runs the case of
its call (and of the helper function it uses) made for the layout it is handed."""

import torch
from torch import nn


def drop_path(x, p: float = 0.0, training: bool = False):
    if p == 0.0 or not training:
        return x
    keep = 1.0 - p
    mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep)
    return x * mask / keep


class DropPath(nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        self.p = p

    def forward(self, x):
        return drop_path(x, self.p, self.training)


class Mixer(nn.Module):
    def __init__(self, channels, p):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn = nn.BatchNorm2d(channels)
        self.conv_drop = DropPath(p)
        self.mlp = nn.Sequential(nn.LayerNorm(channels), nn.Linear(channels, channels))
        self.token_drop = DropPath(p)

    def forward(self, x):
        x = x + self.conv_drop(self.bn(self.conv(x)))
        tokens = x.permute(0, 2, 3, 1)
        tokens = tokens + self.token_drop(self.mlp(tokens))
        return tokens.permute(0, 3, 1, 2)


class TwoLayoutNet(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.mix = nn.Sequential(Mixer(8, 0.1), Mixer(8, 0.2))
        self.out = nn.Conv2d(8, num_classes, 1)

    def forward(self, x):
        return self.out(self.mix(self.stem(x)))


if __name__ == "__main__":
    print(TwoLayoutNet()(torch.randn(2, 3, 8, 8)).shape)
