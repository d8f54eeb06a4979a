"""Attention blocks of convnets, each in its authors' style: a non-local block (`view(b, c, -1).permute(0, 2, 1)`, `bmm`,
back by `permute(0, 2, 1).contiguous().view(b, c, h, w)`), CBAM (an MLP on `x.mean((2, 3))` and an adaptive max pool,
`unsqueeze(-1).unsqueeze(-1)` gates, a spatial map of `cat([x.mean(1, keepdim=True), x.max(1, keepdim=True)[0]], 1)`),
GhostNet's module (`cat` of two halves sliced back to `[:, :self.oup, :, :]`) and an FPN returning
`[s(l) for s, l in zip(self.smooth, laterals)]`, pooled and flattened by its caller."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class NonLocal(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.inter = c // 2
        self.theta = nn.Conv2d(c, self.inter, 1)
        self.phi = nn.Conv2d(c, self.inter, 1)
        self.g = nn.Conv2d(c, self.inter, 1)
        self.out = nn.Conv2d(self.inter, c, 1)

    def forward(self, x):
        b, c, h, w = x.size()
        theta = self.theta(x).view(b, self.inter, -1).permute(0, 2, 1)
        phi = self.phi(x).view(b, self.inter, -1)
        attn = torch.softmax(torch.bmm(theta, phi), dim=-1)
        g = self.g(x).view(b, self.inter, -1).permute(0, 2, 1)
        y = torch.bmm(attn, g).permute(0, 2, 1).contiguous().view(b, self.inter, h, w)
        return x + self.out(y)


class CBAM(nn.Module):
    def __init__(self, c, r=4):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(c, c // r), nn.ReLU(), nn.Linear(c // r, c))
        self.spatial = nn.Conv2d(2, 1, 7, padding=3)

    def forward(self, x):
        avg = self.mlp(x.mean((2, 3)))
        mx = self.mlp(F.adaptive_max_pool2d(x, 1).flatten(1))
        x = x * torch.sigmoid(avg + mx).unsqueeze(-1).unsqueeze(-1)
        s = torch.cat([x.mean(1, keepdim=True), x.max(1, keepdim=True)[0]], dim=1)
        return x * torch.sigmoid(self.spatial(s))


class Ghost(nn.Module):
    def __init__(self, inp, oup, ratio=2):
        super().__init__()
        self.oup = oup
        init = (oup + ratio - 1) // ratio
        self.primary = nn.Sequential(nn.Conv2d(inp, init, 1, bias=False), nn.BatchNorm2d(init), nn.ReLU(True))
        self.cheap = nn.Sequential(nn.Conv2d(init, init * (ratio - 1), 3, 1, 1, groups=init, bias=False),
                                   nn.BatchNorm2d(init * (ratio - 1)), nn.ReLU(True))

    def forward(self, x):
        x1 = self.primary(x)
        x2 = self.cheap(x1)
        out = torch.cat([x1, x2], dim=1)
        return out[:, :self.oup, :, :]


class FPN(nn.Module):
    def __init__(self, chans, out):
        super().__init__()
        self.lateral = nn.ModuleList([nn.Conv2d(c, out, 1) for c in chans])
        self.smooth = nn.ModuleList([nn.Conv2d(out, out, 3, padding=1) for _ in chans])

    def forward(self, feats):
        laterals = [l(f) for l, f in zip(self.lateral, feats)]
        for i in range(len(laterals) - 1, 0, -1):
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=laterals[i - 1].shape[-2:],
                                                              mode="nearest")
        return [s(l) for s, l in zip(self.smooth, laterals)]


class AttentionConvNet(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.s1 = Ghost(8, 12)
        self.s2 = nn.Sequential(nn.Conv2d(12, 16, 3, 2, 1), CBAM(16))
        self.s3 = nn.Sequential(nn.Conv2d(16, 24, 3, 2, 1, dilation=1), NonLocal(24))
        self.fpn = FPN([12, 16, 24], 8)
        self.head = nn.Linear(8 * 3, num_classes)

    def forward(self, x):
        c1 = self.s1(self.stem(x))
        c2 = self.s2(c1)
        c3 = self.s3(c2)
        p = self.fpn([c1, c2, c3])
        pooled = torch.cat([F.adaptive_avg_pool2d(t, 1).flatten(1) for t in p], dim=1)
        return self.head(pooled)
