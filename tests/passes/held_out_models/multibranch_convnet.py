"""Multi-branch convnet blocks in their authors' style: Res2Net's split loop (`sp = spx[i] if i == 0 else sp + spx[i]`, the
output grown by `cat` turn by turn), SKNet's selective kernel (`torch.stack` of branches, `sum(dim=1)`, attention
`softmax(dim=1).unsqueeze(-1).unsqueeze(-1)`), a DenseNet block as an `nn.ModuleDict` subclass (`for name, layer in
self.items()`, `cat(features, 1)` of a growing list) and a U-Net up step (PixelShuffle, `F.pad` by size differences
read from `x.size()[2]`, `cat([x2, x1], dim=1)`)."""

import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class Bottle2neck(nn.Module):
    def __init__(self, c, scale=4):
        super().__init__()
        self.width = c // scale
        self.nums = scale - 1
        self.convs = nn.ModuleList([nn.Conv2d(self.width, self.width, 3, padding=1) for _ in range(self.nums)])
        self.bns = nn.ModuleList([nn.BatchNorm2d(self.width) for _ in range(self.nums)])
        self.scale = scale

    def forward(self, x):
        spx = torch.split(x, self.width, 1)
        for i in range(self.nums):
            sp = spx[i] if i == 0 else sp + spx[i]
            sp = F.relu(self.bns[i](self.convs[i](sp)))
            out = sp if i == 0 else torch.cat((out, sp), 1)
        out = torch.cat((out, spx[self.nums]), 1)
        return out + x


class SKConv(nn.Module):
    def __init__(self, c, M=2, r=2):
        super().__init__()
        self.M = M
        self.convs = nn.ModuleList([nn.Sequential(nn.Conv2d(c, c, 3, padding=1 + i, dilation=1 + i, groups=2),
                                                  nn.BatchNorm2d(c), nn.ReLU()) for i in range(M)])
        self.fc = nn.Linear(c, c // r)
        self.fcs = nn.ModuleList([nn.Linear(c // r, c) for _ in range(M)])

    def forward(self, x):
        feats = torch.stack([conv(x) for conv in self.convs], dim=1)
        U = torch.sum(feats, dim=1)
        s = U.mean(-1).mean(-1)
        z = self.fc(s)
        att = torch.stack([fc(z) for fc in self.fcs], dim=1)
        att = torch.softmax(att, dim=1).unsqueeze(-1).unsqueeze(-1)
        return (feats * att).sum(dim=1)


class DenseBlock(nn.ModuleDict):
    def __init__(self, n, c, g):
        super().__init__()
        for i in range(n):
            self.add_module(f"layer{i}", nn.Sequential(nn.BatchNorm2d(c + i * g), nn.ReLU(),
                                                       nn.Conv2d(c + i * g, g, 3, padding=1)))

    def forward(self, x):
        features = [x]
        for name, layer in self.items():
            features.append(layer(torch.cat(features, 1)))
        return torch.cat(features, 1)


class Up(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.up = nn.Sequential(nn.Conv2d(cin, cout * 4, 1), nn.PixelShuffle(2))
        self.conv = nn.Conv2d(cout * 2, cout, 3, padding=1)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        diffY = x2.size()[2] - x1.size()[2]
        diffX = x2.size()[3] - x1.size()[3]
        x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2])
        return self.conv(torch.cat([x2, x1], dim=1))


class MultiBranchConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.res2 = Bottle2neck(8)
        self.down = nn.Conv2d(8, 12, 3, 2, 1)
        self.sk = SKConv(12)
        self.dense = DenseBlock(2, 12, 4)
        self.up = Up(20, 8)
        self.out = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        a = self.res2(self.stem(x))
        b = self.dense(self.sk(self.down(a)))
        return self.out(self.up(b, a))
