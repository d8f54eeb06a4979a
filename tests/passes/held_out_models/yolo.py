"""Held-out model (written for porter's layout checks in another author's style, not copied from a fixture)."""
# ruff: noqa  (written in other authors' styles on purpose: their habits are what the ports are checked on)
"""YOLOv8-style backbone + neck in the style of ultralytics/nn/modules (Conv, C2f, SPPF, Concat)."""
import torch
import torch.nn as nn


def autopad(k, p=None, d=1):  # kernel, padding, dilation
    """Pad to 'same' shape outputs."""
    if d > 1:
        k = d * (k - 1) + 1 if isinstance(k, int) else [d * (x - 1) + 1 for x in k]  # actual kernel-size
    if p is None:
        p = k // 2 if isinstance(k, int) else [x // 2 for x in k]  # auto-pad
    return p


class Conv(nn.Module):
    """Standard convolution with args(ch_in, ch_out, kernel, stride, padding, groups, dilation, activation)."""

    default_act = nn.SiLU()  # default activation

    def __init__(self, c1, c2, k=1, s=1, p=None, g=1, d=1, act=True):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, autopad(k, p, d), groups=g, dilation=d, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = self.default_act if act is True else act if isinstance(act, nn.Module) else nn.Identity()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))

    def forward_fuse(self, x):
        return self.act(self.conv(x))


class Bottleneck(nn.Module):
    """Standard bottleneck."""

    def __init__(self, c1, c2, shortcut=True, g=1, k=(3, 3), e=0.5):
        super().__init__()
        c_ = int(c2 * e)  # hidden channels
        self.cv1 = Conv(c1, c_, k[0], 1)
        self.cv2 = Conv(c_, c2, k[1], 1, g=g)
        self.add = shortcut and c1 == c2

    def forward(self, x):
        return x + self.cv2(self.cv1(x)) if self.add else self.cv2(self.cv1(x))


class C2f(nn.Module):
    """Faster Implementation of CSP Bottleneck with 2 convolutions."""

    def __init__(self, c1, c2, n=1, shortcut=False, g=1, e=0.5):
        super().__init__()
        self.c = int(c2 * e)  # hidden channels
        self.cv1 = Conv(c1, 2 * self.c, 1, 1)
        self.cv2 = Conv((2 + n) * self.c, c2, 1)  # optional act=FReLU(c2)
        self.m = nn.ModuleList(Bottleneck(self.c, self.c, shortcut, g, k=((3, 3), (3, 3)), e=1.0) for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        y.extend(m(y[-1]) for m in self.m)
        return self.cv2(torch.cat(y, 1))

    def forward_split(self, x):
        y = list(self.cv1(x).split((self.c, self.c), 1))
        y.extend(m(y[-1]) for m in self.m)
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    """Spatial Pyramid Pooling - Fast (SPPF) layer for YOLOv5 by Glenn Jocher."""

    def __init__(self, c1, c2, k=5):
        super().__init__()
        c_ = c1 // 2  # hidden channels
        self.cv1 = Conv(c1, c_, 1, 1)
        self.cv2 = Conv(c_ * 4, c2, 1, 1)
        self.m = nn.MaxPool2d(kernel_size=k, stride=1, padding=k // 2)

    def forward(self, x):
        y = [self.cv1(x)]
        y.extend(self.m(y[-1]) for _ in range(3))
        return self.cv2(torch.cat(y, 1))


class Concat(nn.Module):
    """Concatenate a list of tensors along dimension."""

    def __init__(self, dimension=1):
        super().__init__()
        self.d = dimension

    def forward(self, x):
        return torch.cat(x, self.d)


class YOLOv8Mini(nn.Module):
    def __init__(self, w=(16, 32, 64, 128), n=1):
        super().__init__()
        self.b0 = Conv(3, w[0], 3, 2)
        self.b1 = Conv(w[0], w[1], 3, 2)
        self.b2 = C2f(w[1], w[1], n, True)
        self.b3 = Conv(w[1], w[2], 3, 2)
        self.b4 = C2f(w[2], w[2], n, True)
        self.b5 = Conv(w[2], w[3], 3, 2)
        self.b6 = C2f(w[3], w[3], n, True)
        self.b7 = SPPF(w[3], w[3], 5)
        self.up = nn.Upsample(None, 2, "nearest")
        self.cat = Concat(1)
        self.h1 = C2f(w[3] + w[2], w[2], n)
        self.h2 = C2f(w[2] + w[1], w[1], n)
        self.h3 = Conv(w[1], w[1], 3, 2)
        self.h4 = C2f(w[1] + w[2], w[2], n)

    def forward(self, x):
        x = self.b1(self.b0(x))
        p3 = self.b2(x)
        p4 = self.b4(self.b3(p3))
        p5 = self.b7(self.b6(self.b5(p4)))
        x = self.h1(self.cat([self.up(p5), p4]))
        out3 = self.h2(self.cat([self.up(x), p3]))
        out4 = self.h4(self.cat([self.h3(out3), x]))
        return out3, out4
