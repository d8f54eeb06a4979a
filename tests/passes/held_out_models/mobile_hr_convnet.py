"""Mobile and multi-resolution convnet blocks in their authors' style: MobileNetV2's inverted residual (`layers.extend`,
`nn.Sequential(*layers)`, `use_res_connect`), the classic SENet layer (`view(b, c)`, `y.expand_as(x)`), CoordConv
(`torch.linspace(...).view(1, 1, 1, w).expand(b, 1, h, w)` joined to the image), YOLO's SPP (`cat([x] + [pools])`),
an HRNet fuse (nested `nn.ModuleList` rows holding None, bilinear `F.interpolate(scale_factor=2 ** (j - i))`), a
`ConvTranspose2d` with `output_padding`, and `z.view(z.size(0), -1)` after a pool to (1, 1)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class SELayer(nn.Module):
    def __init__(self, channel, reduction=4):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(nn.Linear(channel, channel // reduction, bias=False), nn.ReLU(inplace=True),
                                nn.Linear(channel // reduction, channel, bias=False), nn.Sigmoid())

    def forward(self, x):
        b, c, _, _ = x.size()
        y = self.avg_pool(x).view(b, c)
        y = self.fc(y).view(b, c, 1, 1)
        return x * y.expand_as(x)


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        hidden = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(nn.Sequential(nn.Conv2d(inp, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6()))
        layers.extend([
            nn.Sequential(nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False), nn.BatchNorm2d(hidden),
                          nn.Hardswish()),
            SELayer(hidden),
            nn.Conv2d(hidden, oup, 1, bias=False),
            nn.BatchNorm2d(oup),
        ])
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class CoordConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin + 2, cout, 3, padding=1)

    def forward(self, x):
        b, _, h, w = x.shape
        xx = torch.linspace(-1, 1, w).view(1, 1, 1, w).expand(b, 1, h, w)
        yy = torch.linspace(-1, 1, h).view(1, 1, h, 1).expand(b, 1, h, w)
        return self.conv(torch.cat([x, xx, yy], dim=1))


class SPP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.cv = nn.Conv2d(c * 4, c, 1)

    def forward(self, x):
        return self.cv(torch.cat([x] + [F.max_pool2d(x, k, 1, k // 2) for k in (5, 9, 13)], 1))


class HRFuse(nn.Module):
    def __init__(self, chans):
        super().__init__()
        self.n = len(chans)
        self.fuse = nn.ModuleList()
        for i in range(self.n):
            row = nn.ModuleList()
            for j in range(self.n):
                if j > i:
                    row.append(nn.Sequential(nn.Conv2d(chans[j], chans[i], 1, bias=False), nn.BatchNorm2d(chans[i])))
                elif j == i:
                    row.append(None)
                else:
                    row.append(nn.Conv2d(chans[j], chans[i], 3, 2 ** (i - j), 1, bias=False))
            self.fuse.append(row)

    def forward(self, xs):
        out = []
        for i in range(self.n):
            y = xs[i]
            for j in range(self.n):
                if j > i:
                    y = y + F.interpolate(self.fuse[i][j](xs[j]), scale_factor=2 ** (j - i), mode="bilinear",
                                          align_corners=False)
                elif j < i:
                    y = y + self.fuse[i][j](xs[j])
            out.append(F.relu(y))
        return out


class MixNet3(nn.Module):
    def __init__(self, num_classes=7):
        super().__init__()
        self.coord = CoordConv(3, 8)
        self.blocks = nn.Sequential(InvertedResidual(8, 8, 1, 1), InvertedResidual(8, 12, 2, 4),
                                    InvertedResidual(12, 12, 1, 4))
        self.low = nn.Conv2d(12, 12, 3, 2, 1)
        self.hr = HRFuse([12, 12])
        self.spp = SPP(12)
        self.up = nn.ConvTranspose2d(12, 12, 3, stride=2, padding=1, output_padding=1)
        self.classifier = nn.Linear(24, num_classes)

    def forward(self, x):
        x = self.blocks(self.coord(x))
        a, b = self.hr([x, self.low(x)])
        y = self.spp(a) + self.up(b)
        z = torch.cat([y, a], 1)
        z = F.adaptive_avg_pool2d(z, (1, 1))
        return self.classifier(z.view(z.size(0), -1))
