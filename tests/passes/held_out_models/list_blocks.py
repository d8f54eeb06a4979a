"""Blocks that take and return a list of images (SelecSLS-style): the first block is handed a tensor and wraps it,
each later one takes its predecessor's list; a container's forward loops over them."""
from typing import List

import torch
import torch.nn as nn


def conv_bn(cin, cout, k=3, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, padding=k // 2, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True))


class ListSequential(nn.Sequential):
    def forward(self, x) -> List[torch.Tensor]:
        for module in self:
            x = module(x)
        return x


class Pick(nn.Module):
    def __init__(self, index=0):
        super().__init__()
        self.index = index

    def forward(self, x):
        return x[self.index]


class SkipBlock(nn.Module):
    def __init__(self, cin, skip, mid, cout, is_first, stride):
        super().__init__()
        self.is_first = is_first
        self.conv1 = conv_bn(cin, mid, 3, stride)
        self.conv2 = conv_bn(mid, mid // 2, 3)
        self.conv3 = conv_bn(mid + mid // 2 + (0 if is_first else skip), cout, 1)

    def forward(self, x: List[torch.Tensor]) -> List[torch.Tensor]:
        if not isinstance(x, list):
            x = [x]
        d1 = self.conv1(x[0])
        d2 = self.conv2(d1)
        if self.is_first:
            out = self.conv3(torch.cat([d1, d2], 1))
            return [out, out]
        return [self.conv3(torch.cat([d1, d2, x[1]], 1)), x[1]]


class SkipNet(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.stem = conv_bn(3, 8, 3, 2)
        specs = [(8, 0, 8, 16, True, 1), (16, 16, 8, 16, False, 1), (16, 16, 12, 24, True, 2),
                 (24, 24, 12, 24, False, 1)]
        self.features = ListSequential(*[SkipBlock(*spec) for spec in specs])
        self.pick = Pick()
        self.head = conv_bn(24, 32, 1)
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.pick(self.features(x))
        x = self.head(x)
        return self.fc(x.mean((2, 3)))
