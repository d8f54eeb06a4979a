"""A convnet whose block classes come from elsewhere than a direct constructor call: spec objects carrying the block
class (`spec.unit(spec)`, as EfficientNet's `cnf.block`), a Sequential subclass building blocks from a class it is
handed (RegNet's AnyStage), a ModuleList extended with `+=`, a norm class handed down three constructors, and a
gate whose forward hands its input to a helper method first (SE's `self._scale(input)`)."""

from functools import partial

import torch
from torch import nn


class Residual(nn.Module):
    def __init__(self, spec, norm):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(spec.width, spec.width, 3, padding=1, bias=False), norm(spec.width))

    def forward(self, x):
        return torch.relu(x + self.body(x))


class Gated(nn.Module):
    def __init__(self, spec, norm):
        super().__init__()
        self.norm = norm(spec.width)
        self.squeeze = nn.Conv2d(spec.width, max(1, spec.width // 2), 1)
        self.expand = nn.Conv2d(max(1, spec.width // 2), spec.width, 1)

    def forward(self, x):
        return self.norm(x) * self._gate(x)

    def _gate(self, x):
        pooled = nn.functional.adaptive_avg_pool2d(x, 1)
        return torch.sigmoid(self.expand(torch.relu(self.squeeze(pooled))))


class ResidualSpec:
    def __init__(self, width):
        self.width = width
        self.unit = Residual


class GatedSpec:
    def __init__(self, width):
        self.width = width
        self.unit = Gated


class Stage(nn.Sequential):
    def __init__(self, unit_cls, spec, count, norm):
        super().__init__()
        for index in range(count):
            self.add_module(f"unit{index}", unit_cls(spec, norm))


class Trunk(nn.Module):
    def __init__(self, specs, norm):
        super().__init__()
        self.units = nn.ModuleList()
        self.units += [spec.unit(spec, norm) for spec in specs]

    def forward(self, x):
        for unit in self.units:
            x = unit(x)
        return x


class ConfigBlocksNet(nn.Module):
    def __init__(self, num_classes=3, norm=None):
        super().__init__()
        if norm is None:
            norm = partial(nn.BatchNorm2d, eps=1e-3)
        self.stem = nn.Conv2d(3, 6, 3, padding=1)
        self.trunk = Trunk([ResidualSpec(6), GatedSpec(6)], norm)
        self.stage = Stage(Gated, GatedSpec(6), 2, norm)
        self.head = nn.Linear(6, num_classes)

    def forward(self, x):
        x = self.stage(self.trunk(self.stem(x)))
        return self.head(x.mean((2, 3)))


if __name__ == "__main__":
    print(ConfigBlocksNet()(torch.randn(2, 3, 12, 12)).shape)
