"""Held-out model (written for porter's layout checks in another author's style, not copied from a fixture)."""
# ruff: noqa  (written in other authors' styles on purpose: their habits are what the ports are checked on)
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualLayer(nn.Module):
    def __init__(self, residual_channels, skip_channels, dilation):
        super().__init__()
        self.dilated = nn.Conv1d(residual_channels, 2 * residual_channels, 2, dilation=dilation, padding=dilation)
        self.res = nn.Conv1d(residual_channels, residual_channels, 1)
        self.skip = nn.Conv1d(residual_channels, skip_channels, 1)

    def forward(self, x):
        h = self.dilated(x)[..., :x.size(-1)]
        f, g = h.chunk(2, dim=1)
        z = torch.tanh(f) * torch.sigmoid(g)
        return x + self.res(z), self.skip(z)


class WaveNetLite(nn.Module):
    def __init__(self, in_ch=1, res_ch=8, skip_ch=12, layers=4, n_out=5):
        super().__init__()
        self.start = nn.Conv1d(in_ch, res_ch, 1)
        self.layers = nn.ModuleList([ResidualLayer(res_ch, skip_ch, 2 ** i) for i in range(layers)])
        self.end1 = nn.Conv1d(skip_ch, skip_ch, 1)
        self.end2 = nn.Conv1d(skip_ch, n_out, 1)

    def forward(self, x):
        x = self.start(x)
        skips = []
        for layer in self.layers:
            x, s = layer(x)
            skips.append(s)
        out = torch.stack(skips, dim=0).sum(dim=0)
        out = self.end2(F.relu(self.end1(F.relu(out))))
        return out
