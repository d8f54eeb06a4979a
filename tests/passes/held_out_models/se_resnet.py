"""Held-out model (written for porter's layout checks in another author's style, not copied from a fixture)."""
# ruff: noqa  (written in other authors' styles on purpose: their habits are what the ports are checked on)
import torch
import torch.nn as nn
import torch.nn.functional as F


class SELayer(nn.Module):
    def __init__(self, channel, reduction=4):
        super(SELayer, self).__init__()
        self.fc = nn.Sequential(
            nn.Linear(channel, channel // reduction, bias=False),
            nn.ReLU(inplace=True),
            nn.Linear(channel // reduction, channel, bias=False),
            nn.Sigmoid()
        )

    def forward(self, x):
        b, c, _, _ = x.size()
        y = x.mean((2, 3), keepdim=True).view(b, c)
        y = self.fc(y).view(b, c, 1, 1)
        return x * y.expand_as(x)


class Stage(nn.ModuleDict):
    """Blocks kept by name; the stage runs them in order."""

    def __init__(self, cin, cout, n, stride):
        super().__init__()
        self["down"] = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())
        for i in range(n):
            self["block%d" % i] = SEBasicBlock(cout)

    def forward(self, x):
        for name in self.keys():
            x = self[name](x)
        return x


class SEBasicBlock(nn.Module):
    def __init__(self, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.se = SELayer(planes)
        self.layer_scale = nn.Parameter(torch.full((planes,), 0.3))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.se(self.bn2(self.conv2(out)))
        out = out * self.layer_scale.view(1, -1, 1, 1)
        return F.relu(out + x)


class SEResNetMini(nn.Module):
    def __init__(self, widths=(16, 32), depth=(1, 2), num_classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, widths[0], 3, 1, 1)
        stages = []
        cin = widths[0]
        for w, n in zip(widths, depth):
            stages.append(Stage(cin, w, n, 2))
            cin = w
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))
