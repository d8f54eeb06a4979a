"""Point 3 of issue #9 in one convnet, written fresh: stages from a `_make_stage` staticmethod unpacked into
`nn.Sequential(*layers)` and held in an `nn.ModuleList`, ShuffleNetV2 units (`x.chunk(2, dim=1)`, `torch.cat`, a
view/transpose/view channel shuffle in its own module), a LayerNorm subclass between `permute(0, 2, 3, 1)` and back,
a gate slicing channels `x[:, :keep]` / `x[:, keep:]` with per-channel `view(1, -1, 1, 1)` and `[None, :, None,
None]` broadcasts, and a `cat` over a list grown with `append` in the stage loop."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_bn(cin, cout, k=3, s=1, g=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, groups=g, bias=False), nn.BatchNorm2d(cout))


class Shuffle(nn.Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, x):
        n, c, h, w = x.size()
        x = x.view(n, self.groups, c // self.groups, h, w)
        x = torch.transpose(x, 1, 2).contiguous()
        return x.view(n, -1, h, w)


class Unit(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.stride = stride
        mid = cout // 2
        if stride > 1:
            self.left = nn.Sequential(conv_bn(cin, cin, 3, stride, cin), conv_bn(cin, mid, 1), nn.ReLU(inplace=True))
            right_in = cin
        else:
            self.left = None
            right_in = mid
        self.right = nn.Sequential(conv_bn(right_in, mid, 1), nn.ReLU(inplace=True),
                                   conv_bn(mid, mid, 3, stride, mid), conv_bn(mid, mid, 1), nn.ReLU(inplace=True))
        self.shuffle = Shuffle(2)

    def forward(self, x):
        if self.left is None:
            a, b = x.chunk(2, dim=1)
            out = torch.cat((a, self.right(b)), 1)
        else:
            out = torch.cat([self.left(x), self.right(x)], dim=1)
        return self.shuffle(out)


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = super().forward(x)
        return x.permute(0, 3, 1, 2)


class Gate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(c) * 0.5)
        self.shift = nn.Parameter(torch.zeros(c))

    def forward(self, x):
        keep = x.shape[1] // 2
        gated = x[:, :keep] * torch.sigmoid(x[:, keep:].mean(dim=(2, 3), keepdim=True))
        x = torch.cat([gated, x[:, keep:]], dim=1)
        return x * self.scale.view(1, -1, 1, 1) + self.shift[None, :, None, None]


class ShuffleStages(nn.Module):
    def __init__(self, widths=(16, 32, 64), num_classes=7):
        super().__init__()
        self.stem = conv_bn(3, widths[0], 3, 2)
        self.stages = nn.ModuleList([self._make_stage(a, b, 2) for a, b in zip(widths[:-1], widths[1:])])
        self.norm = LayerNorm2d(widths[-1])
        self.gate = Gate(widths[-1])
        self.head = nn.Linear(widths[-1], num_classes)

    @staticmethod
    def _make_stage(cin, cout, depth):
        layers = [Unit(cin, cout, 2)]
        for _ in range(depth - 1):
            layers.append(Unit(cout, cout, 1))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = F.relu(self.stem(x))
        outs = []
        for stage in self.stages:
            x = stage(x)
            outs.append(F.adaptive_avg_pool2d(x, 1))
        x = self.gate(self.norm(x))
        pooled = torch.cat(outs, 1)
        return self.head(x.mean((2, 3))) + pooled.flatten(1).sum(1, keepdim=True)
