"""A convnet that runs its stages channels-last in torch itself, as timm's MambaOut does: a stem that permutes to
(N, H, W, C) around its LayerNorms, a Downsample of `x.permute(0, 3, 1, 2)`, a strided conv and `permute(0, 2, 3,
1)`, gated blocks splitting the Linear's output on its last dim and running a depthwise conv on one part between the
same permutes, the head pooling over dims (1, 2). Every permute is a relabelling of the image as it lies: the port
converts the input once."""

import torch
import torch.nn as nn


class Stem(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout // 2, 3, stride=2, padding=1)
        self.norm1 = nn.LayerNorm(cout // 2)
        self.act = nn.GELU()
        self.conv2 = nn.Conv2d(cout // 2, cout, 3, stride=2, padding=1)
        self.norm2 = nn.LayerNorm(cout)

    def forward(self, x):
        x = self.conv1(x)
        x = x.permute(0, 2, 3, 1)
        x = self.norm1(x)
        x = x.permute(0, 3, 1, 2)
        x = self.act(x)
        x = self.conv2(x)
        x = x.permute(0, 2, 3, 1)
        x = self.norm2(x)
        return x


class Downsample(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride=2, padding=1)
        self.norm = nn.LayerNorm(cout)

    def forward(self, x):
        x = x.permute(0, 3, 1, 2)
        x = self.conv(x)
        x = x.permute(0, 2, 3, 1)
        x = self.norm(x)
        return x


class GatedConvBlock(nn.Module):
    def __init__(self, dim, hidden=16, conv_channels=4):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden * 2)
        self.act = nn.GELU()
        self.split_indices = (hidden, hidden - conv_channels, conv_channels)
        self.conv = nn.Conv2d(conv_channels, conv_channels, 7, padding=3, groups=conv_channels)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        shortcut = x
        x = self.norm(x)
        x = self.fc1(x)
        g, i, c = torch.split(x, self.split_indices, dim=-1)
        c = c.permute(0, 3, 1, 2)
        c = self.conv(c)
        c = c.permute(0, 2, 3, 1)
        x = self.fc2(self.act(g) * torch.cat((i, c), dim=-1))
        return x + shortcut


class NHWCConvNet(nn.Module):
    def __init__(self, dims=(8, 12), num_classes=5):
        super().__init__()
        self.stem = Stem(3, dims[0])
        stages = []
        for i, dim in enumerate(dims):
            layers = []
            if i > 0:
                layers.append(Downsample(dims[i - 1], dim))
            layers += [GatedConvBlock(dim) for _ in range(2)]
            stages.append(nn.Sequential(*layers))
        self.stages = nn.Sequential(*stages)
        self.norm = nn.LayerNorm(dims[-1])
        self.head = nn.Linear(dims[-1], num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.stages(x)
        x = x.mean((1, 2))
        return self.head(self.norm(x))

