import torch
import torch.nn as nn
import torch.nn.functional as F
from collections import OrderedDict


class DenseLayer(nn.Module):
    def __init__(self, in_ch, growth, bn_size=2):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(in_ch)
        self.conv1 = nn.Conv2d(in_ch, bn_size * growth, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth)
        self.conv2 = nn.Conv2d(bn_size * growth, growth, 3, padding=1, bias=False)

    def forward(self, inputs):
        x = torch.cat(inputs, 1) if isinstance(inputs, list) else inputs
        out = self.conv1(F.relu(self.norm1(x)))
        out = self.conv2(F.relu(self.norm2(out)))
        return out


class DenseBlock(nn.ModuleDict):
    def __init__(self, n, in_ch, growth):
        super().__init__()
        for i in range(n):
            self.add_module("denselayer%d" % (i + 1), DenseLayer(in_ch + i * growth, growth))

    def forward(self, x):
        features = [x]
        for name, layer in self.items():
            new = layer(torch.cat(features, 1))
            features.append(new)
        return torch.cat(features, 1)


class TinyDenseNet(nn.Module):
    def __init__(self, growth=8, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, 16, 3, padding=1, bias=False)),
            ("norm0", nn.BatchNorm2d(16)),
            ("relu0", nn.ReLU(inplace=True)),
            ("pool0", nn.MaxPool2d(3, stride=2, padding=1)),
        ]))
        self.block = DenseBlock(3, 16, growth)
        self.norm = nn.BatchNorm2d(16 + 3 * growth)
        self.classifier = nn.Linear(16 + 3 * growth, num_classes)

    def forward(self, x):
        f = self.block(self.features(x))
        out = F.relu(self.norm(f), inplace=True)
        out = F.adaptive_avg_pool2d(out, (1, 1))
        out = torch.flatten(out, 1)
        return self.classifier(out)


if __name__ == "__main__":
    print(TinyDenseNet()(torch.randn(2, 3, 32, 32)).shape)
