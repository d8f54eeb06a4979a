import torch
from torch import nn


class SqueezeExcite(nn.Module):
    def __init__(self, ch, reduced):
        super().__init__()
        self.se = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(ch, reduced, 1),
            nn.SiLU(),
            nn.Conv2d(reduced, ch, 1),
            nn.Sigmoid(),
        )

    def forward(self, x):
        return x * self.se(x)


class MBConv(nn.Module):
    def __init__(self, cin, cout, expand, stride, kernel=3):
        super().__init__()
        hidden = cin * expand
        self.use_residual = cin == cout and stride == 1
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.SiLU()]
        layers += [
            nn.Conv2d(hidden, hidden, kernel, stride, kernel // 2, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden),
            nn.SiLU(),
            SqueezeExcite(hidden, max(1, cin // 4)),
            nn.Conv2d(hidden, cout, 1, bias=False),
            nn.BatchNorm2d(cout),
        ]
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_residual:
            return x + self.block(x)
        return self.block(x)


class EffNetMini(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.SiLU())
        self.blocks = nn.Sequential(
            MBConv(16, 16, 1, 1),
            MBConv(16, 24, 4, 2),
            MBConv(24, 24, 4, 1, kernel=5),
        )
        self.head = nn.Sequential(nn.Conv2d(24, 64, 1, bias=False), nn.BatchNorm2d(64), nn.SiLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(64, num_classes))

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        x = self.pool(x).flatten(1)
        return self.classifier(x)


if __name__ == "__main__":
    print(EffNetMini()(torch.randn(2, 3, 64, 64)).shape)
