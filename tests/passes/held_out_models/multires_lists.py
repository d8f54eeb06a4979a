"""A multi-resolution net in the HRNet manner, written for porter's tests: a Sequential subclass chains modules that
take and return a list of images (one per resolution), each updating its branches in place (`xs[i] = ...`) and
fusing every resolution into each output through an accumulator that starts as None; the head sums per-resolution
features, stepping the running sum down with `down.forward(acc)`."""
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class Exchange(nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.paths = nn.ModuleList([conv_bn(w, w) for w in widths])
        self.mix = nn.ModuleList()
        for i, wi in enumerate(widths):
            row = nn.ModuleList()
            for j, wj in enumerate(widths):
                if j > i:
                    row.append(nn.Sequential(nn.Conv2d(wj, wi, 1, bias=False), nn.BatchNorm2d(wi),
                                             nn.Upsample(scale_factor=2 ** (j - i), mode="nearest")))
                elif j == i:
                    row.append(nn.Identity())
                else:
                    steps = [conv_bn(wj, wj, 2) for _ in range(i - j - 1)]
                    steps.append(nn.Sequential(nn.Conv2d(wj, wi, 3, 2, 1, bias=False), nn.BatchNorm2d(wi)))
                    row.append(nn.Sequential(*steps))
            self.mix.append(row)

    def forward(self, xs: List[torch.Tensor]) -> List[torch.Tensor]:
        for i, path in enumerate(self.paths):
            xs[i] = path(xs[i])
        fused = []
        for row in self.mix:
            acc = None
            for j, step in enumerate(row):
                acc = step(xs[j]) if acc is None else acc + step(xs[j])
            fused.append(F.relu(acc))
        return fused


class Chain(nn.Sequential):
    def forward(self, xs: List[torch.Tensor]) -> List[torch.Tensor]:
        for stage in self:
            xs = stage(xs)
        return xs


class MultiRes(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.stem = conv_bn(3, 8, 2)
        self.split = nn.ModuleList([conv_bn(8, 16, 2), conv_bn(16, 24, 2)])
        self.body = Chain(Exchange([8, 16, 24]), Exchange([8, 16, 24]))
        self.heads = nn.ModuleList([nn.Conv2d(w, 32, 1) for w in (8, 16, 24)])
        self.down = nn.ModuleList([nn.Conv2d(32, 32, 3, 2, 1) for _ in range(2)])
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = self.stem(x)
        mid = self.split[0](x)
        xs = self.body([x, mid, self.split[1](mid)])
        acc = None
        for i, head in enumerate(self.heads):
            if acc is None:
                acc = head(xs[i])
            else:
                down = self.down[i - 1]
                acc = head(xs[i]) + down.forward(acc)
        return self.fc(acc.mean((2, 3)))
