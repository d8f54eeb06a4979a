"""A ResNeXt built by `_make_layer` mutating self.inplanes, one block instance called twice (weight sharing), a
helper block called from two places on different-sized maps, `torch.split` into groups concatenated back."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Bottleneck(nn.Module):
    expansion = 2

    def __init__(self, inplanes, planes, stride=1, downsample=None, cardinality=4):
        super().__init__()
        width = planes
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, groups=cardinality, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class SplitMix(nn.Module):
    def __init__(self, channels, groups=2):
        super().__init__()
        self.groups = groups
        self.convs = nn.ModuleList([nn.Conv2d(channels // groups, channels // groups, 3, padding=1)
                                    for _ in range(groups)])

    def forward(self, x):
        parts = torch.split(x, x.size(1) // self.groups, dim=1)
        return torch.cat([conv(p) for conv, p in zip(self.convs, parts)], dim=1)


class ResNeXtShared(nn.Module):
    def __init__(self, layers=(1, 2, 1), num_classes=10):
        super().__init__()
        self.inplanes = 16
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = self._make_layer(Bottleneck, 8, layers[0])
        self.layer2 = self._make_layer(Bottleneck, 16, layers[1], stride=2)
        self.layer3 = self._make_layer(Bottleneck, 16, layers[2], stride=2)
        self.mix = SplitMix(32)
        self.refine = Bottleneck(32, 16)
        self.fc = nn.Linear(32, num_classes)

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                                       nn.BatchNorm2d(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.mix(x)
        x = self.refine(x)
        x = self.layer3(x)
        x = self.refine(self.mix(x))  # the same instances again, on smaller maps
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)
