"""AnyNet/RegNet-style: Stage(nn.Sequential) with own forward, staticmethod block factory, SE by mean, groups."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_divisible(v, d=8):
    return max(d, int(v + d / 2) // d * d)


class SqueezeExcite(nn.Module):
    def __init__(self, w_in, w_se):
        super().__init__()
        self.f1 = nn.Conv2d(w_in, w_se, 1, bias=True)
        self.f2 = nn.Conv2d(w_se, w_in, 1, bias=True)

    def forward(self, x):
        s = x.mean(dim=(2, 3), keepdim=True)
        s = torch.sigmoid(self.f2(F.relu(self.f1(s))))
        return x * s


class Bottleneck(nn.Module):
    def __init__(self, w_in, w_out, stride, group_w, se_r=0.25):
        super().__init__()
        w_b = w_out
        g = w_b // group_w
        self.a = nn.Sequential(nn.Conv2d(w_in, w_b, 1, bias=False), nn.BatchNorm2d(w_b), nn.ReLU(inplace=True))
        self.b = nn.Sequential(nn.Conv2d(w_b, w_b, 3, stride=stride, padding=1, groups=g, bias=False),
                               nn.BatchNorm2d(w_b), nn.ReLU(inplace=True))
        self.se = SqueezeExcite(w_b, int(round(w_in * se_r))) if se_r else None
        self.c = nn.Conv2d(w_b, w_out, 1, bias=False)
        self.c_bn = nn.BatchNorm2d(w_out)
        self.proj = None
        if w_in != w_out or stride != 1:
            self.proj = nn.Sequential(nn.Conv2d(w_in, w_out, 1, stride=stride, bias=False), nn.BatchNorm2d(w_out))

    def forward(self, x):
        shortcut = x if self.proj is None else self.proj(x)
        x = self.b(self.a(x))
        if self.se is not None:
            x = self.se(x)
        x = self.c_bn(self.c(x))
        return F.relu(x + shortcut)


class Stage(nn.Sequential):
    def __init__(self, w_in, w_out, stride, depth, group_w):
        super().__init__()
        for i in range(depth):
            self.add_module(f"b{i + 1}", Bottleneck(w_in if i == 0 else w_out, w_out, stride if i == 0 else 1,
                                                    group_w))

    def forward(self, x):
        for block in self.children():
            x = block(x)
        return x


class AnyNet(nn.Module):
    @staticmethod
    def make_stem(w):
        return nn.Sequential(nn.Conv2d(3, w, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU())

    def __init__(self, widths=(16, 32, 48), depths=(1, 2, 1), group_w=8, num_classes=10):
        super().__init__()
        self.stem = self.make_stem(16)
        w_in = 16
        stages = []
        for i, (w, d) in enumerate(zip(widths, depths)):
            stages.append(Stage(w_in, make_divisible(w), 2, d, group_w))
            w_in = make_divisible(w)
        self.stages = nn.Sequential(*stages)
        self.head = nn.Linear(w_in, num_classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        x = F.adaptive_avg_pool2d(x, (1, 1))
        return self.head(torch.flatten(x, 1))
