"""torchvision's DenseNet shape, written fresh: a dense block that is an `nn.ModuleDict` subclass with its own
forward (`for name, layer in self.items()`, a list of features grown with `append` and handed whole to each layer,
which concatenates it), and a transition that is an `nn.Sequential` subclass built from an OrderedDict whose forward
pools `super().forward(x)`."""
from collections import OrderedDict
import torch
import torch.nn as nn
import torch.nn.functional as F


class DenseLayer(nn.Module):
    def __init__(self, cin, growth):
        super().__init__()
        self.norm = nn.BatchNorm2d(cin)
        self.conv = nn.Conv2d(cin, growth, 3, padding=1, bias=False)

    def forward(self, inputs):
        x = torch.cat(inputs, 1) if isinstance(inputs, list) else inputs
        return self.conv(F.relu(self.norm(x)))


class DenseBlock(nn.ModuleDict):
    def __init__(self, n, cin, growth):
        super().__init__()
        for i in range(n):
            self.add_module("layer%d" % (i + 1), DenseLayer(cin + i * growth, growth))

    def forward(self, init_features):
        features = [init_features]
        for name, layer in self.items():
            features.append(layer(features))
        return torch.cat(features, 1)


class Transition(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(OrderedDict([("norm", nn.BatchNorm2d(cin)), ("relu", nn.ReLU()),
                                      ("conv", nn.Conv2d(cin, cout, 1, bias=False))]))

    def forward(self, x):
        return F.avg_pool2d(super().forward(x), 2)


class DenseDictNet(nn.Module):
    def __init__(self, growth=6, blocks=(2, 3), num_classes=5):
        super().__init__()
        c = 2 * growth
        self.stem = nn.Conv2d(3, c, 3, padding=1, bias=False)
        body = []
        for i, n in enumerate(blocks):
            body.append(DenseBlock(n, c, growth))
            c = c + n * growth
            if i != len(blocks) - 1:
                body.append(Transition(c, c // 2))
                c = c // 2
        self.body = nn.Sequential(*body)
        self.fc = nn.Linear(c, num_classes)

    def forward(self, x):
        x = self.body(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(F.relu(x), (1, 1)), 1))
