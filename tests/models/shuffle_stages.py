"""A ShuffleNet-style network written for porter's layout tests: stages registered with setattr under computed
names, a module-level channel shuffle (view / transpose / view), a channel split with chunk, a feature list handed
to a block that concatenates it, a container grown with add_module inside an if, and a branch that only a
checkpointing flag reaches."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def shuffle_channels(x, groups):
    n, c, h, w = x.size()
    x = x.view(n, groups, c // groups, h, w)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(n, -1, h, w)


class Unit(nn.Module):
    def __init__(self, channels, stride):
        super().__init__()
        self.stride = stride
        half = channels // 2
        if stride > 1:
            self.left = nn.Sequential(nn.Conv2d(channels, channels, 3, stride, 1, groups=channels, bias=False),
                                      nn.BatchNorm2d(channels), nn.Conv2d(channels, half, 1, bias=False),
                                      nn.BatchNorm2d(half), nn.ReLU())
            inner = channels
        else:
            self.left = nn.Sequential()
            inner = half
        self.right = nn.Sequential(nn.Conv2d(inner, half, 1, bias=False), nn.BatchNorm2d(half), nn.ReLU(),
                                   nn.Conv2d(half, half, 3, stride, 1, groups=half, bias=False),
                                   nn.BatchNorm2d(half), nn.Conv2d(half, half, 1, bias=False),
                                   nn.BatchNorm2d(half), nn.ReLU())

    def forward(self, x):
        if self.stride == 1:
            a, b = x.chunk(2, dim=1)
            out = torch.cat((a, self.right(b)), dim=1)
        else:
            out = torch.cat((self.left(x), self.right(x)), dim=1)
        return shuffle_channels(out, 2)


class Gather(nn.Module):
    """Takes a list of feature maps (or one map) and mixes their concatenation."""

    def __init__(self, channels, out_channels, checkpointing=False):
        super().__init__()
        self.checkpointing = checkpointing
        self.norm = nn.BatchNorm2d(channels)
        self.conv = nn.Conv2d(channels, out_channels, 1)

    def forward(self, inputs):
        if isinstance(inputs, torch.Tensor):
            inputs = [inputs]
        if self.checkpointing and torch.is_grad_enabled():
            mixed = torch.utils.checkpoint.checkpoint(self.conv, torch.cat(inputs, 1))
        else:
            mixed = self.conv(F.relu(self.norm(torch.cat(inputs, 1))))
        return mixed


class ShuffleStages(nn.Module):
    def __init__(self, widths=(16, 32), repeats=(2, 2), num_classes=10, head=True):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), nn.BatchNorm2d(widths[0]),
                                  nn.ReLU())
        names = ["stage%d" % (i + 2) for i in range(len(widths))]
        channels = widths[0]
        for name, width, count in zip(names, widths, repeats):
            units = [Unit(channels, 1 if channels == width else 2)]
            if channels != width:
                units = [nn.Conv2d(channels, width, 1), Unit(width, 2)]
            for _ in range(count - 1):
                units.append(Unit(width, 1))
            setattr(self, name, nn.Sequential(*units))
            channels = width
        self.gather = Gather(widths[0] + 2 * widths[-1], widths[-1])
        self.tail = nn.Sequential()
        if head:
            self.tail.add_module("norm", nn.BatchNorm2d(widths[-1]))
            self.tail.add_module("act", nn.ReLU())
        self.tail.add_module("pool", nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        x = self.stem(x)
        early = F.avg_pool2d(x, 2)
        x = self.stage2(x)
        x = self.stage3(x)
        x = self.gather([early, x, x * 0.5])
        x = self.tail(x)
        return self.fc(torch.flatten(x, 1))


if __name__ == "__main__":
    model = ShuffleStages()
    print(model(torch.randn(2, 3, 32, 32)).shape)
