"""A TSM video net (mit-han-lab/temporal-shift-module style): the model reshapes its (N, T*3, H, W) input into
frames `x.view((-1, 3) + x.size()[-2:])` before its stem, and a TemporalShift wrapper's staticmethod shifts a
fold of the channels along the segments with slice stores into `torch.zeros_like(x)` viewed (N, T, C, H, W)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class TemporalShift(nn.Module):
    def __init__(self, net, n_segment=3, n_div=8, inplace=False):
        super(TemporalShift, self).__init__()
        self.net = net
        self.n_segment = n_segment
        self.fold_div = n_div
        self.inplace = inplace

    def forward(self, x):
        x = self.shift(x, self.n_segment, fold_div=self.fold_div, inplace=self.inplace)
        return self.net(x)

    @staticmethod
    def shift(x, n_segment, fold_div=3, inplace=False):
        nt, c, h, w = x.size()
        n_batch = nt // n_segment
        x = x.view(n_batch, n_segment, c, h, w)

        fold = c // fold_div
        if inplace:
            raise NotImplementedError
        else:
            out = torch.zeros_like(x)
            out[:, :-1, :fold] = x[:, 1:, :fold]  # shift left
            out[:, 1:, fold: 2 * fold] = x[:, :-1, fold: 2 * fold]  # shift right
            out[:, :, 2 * fold:] = x[:, :, 2 * fold:]  # not shift

        return out.view(nt, c, h, w)


class TSMNet(nn.Module):
    def __init__(self, n_segment=3, num_classes=5):
        super().__init__()
        self.n_segment = n_segment
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.block1 = TemporalShift(nn.Conv2d(16, 16, 3, 1, 1), n_segment=n_segment, n_div=4)
        self.block2 = TemporalShift(nn.Sequential(nn.Conv2d(16, 24, 3, 2, 1), nn.ReLU()), n_segment=n_segment)
        self.fc = nn.Linear(24, num_classes)

    def forward(self, x):
        # x: (N, T*3, H, W) -> (N*T, 3, H, W)
        n = x.size(0)
        x = x.view((-1, 3) + x.size()[-2:])
        x = self.stem(x)
        x = x + self.block1(x)
        x = self.block2(x)
        x = F.adaptive_avg_pool2d(x, 1).view(x.size(0), -1)
        x = self.fc(x)
        x = x.view((-1, self.n_segment) + x.size()[1:])
        return x.mean(dim=1)
