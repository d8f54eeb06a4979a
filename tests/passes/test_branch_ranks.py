"""A class whose `call` holds a map on one path of an `if` and a sequence on the other (one encoder class for a
spectrogram branch and a signal branch, as torchaudio's Hybrid Demucs writes it: `nn.Conv2d if freq else nn.Conv1d`,
the frequencies folded into the batch around a residual block on the map's path only).

Before: both paths held their tensor channels-last, and the join kept the first path's rank (4) for either, so a
later `F.glu(..., dim=1)` read axis 3 of the rank-3 sequence (an IndexError when the time branch ran; a wrong axis
wherever it exists). The joined tensor stays channels-last with its rank unknown: an op reading an axis then takes it
in torch's order (a first version joined the paths in torch's order, which cost GluonCV's P3D, whose paths fold a
clip's time into the batch, 25 Transposes).
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.passes.snippet_ports import assert_matches_torch, snippet_ports

SOURCE = '''
import torch
import torch.nn.functional as F
from torch import nn


class Residual(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 3, padding=1)

    def forward(self, x):
        return x + F.gelu(self.conv(x))


class EncLayer(nn.Module):
    """One encoder class for both branches: Conv2d over (freq, time) maps or Conv1d over signals, chosen by a flag;
    `empty` keeps the first convolution only (the layer where the branches merge)."""

    def __init__(self, chin, chout, empty=False, freq=True):
        super().__init__()
        klass = nn.Conv2d if freq else nn.Conv1d
        kernel, stride, pad = ([4, 1], [2, 1], [1, 0]) if freq else (4, 2, 1)
        self.freq, self.empty = freq, empty
        self.conv = klass(chin, chout, kernel, stride, pad)
        if empty:
            self.norm = nn.Identity()
            self.rewrite = nn.Identity()
        else:
            self.norm = nn.GroupNorm(1, chout)
            self.rewrite = klass(chout, 2 * chout, 1)
            self.residual = Residual(chout)

    def forward(self, x):
        if not self.freq and x.dim() == 4:
            b, c, f, t = x.shape
            x = x.view(b, -1, t)
        y = self.conv(x)
        if self.empty:
            return y
        y = F.gelu(self.norm(y))
        if self.freq:
            b, c, f, t = y.shape
            y = y.permute(0, 2, 1, 3).reshape(-1, c, t)
            y = self.residual(y)
            y = y.view(b, f, c, t).permute(0, 2, 1, 3)
        else:
            y = self.residual(y)
        return F.glu(self.rewrite(y), dim=1)


class Net(nn.Module):
    def __init__(self, depth=3):
        super().__init__()
        self.freq_encoder = nn.ModuleList()
        self.time_encoder = nn.ModuleList()
        chin, chout = 2, 4
        for index in range(depth):
            last = False
            if index == depth - 1:
                last = True
            kw = {"freq": True}
            self.freq_encoder.append(EncLayer(chin, chout, **kw))
            self.time_encoder.append(EncLayer(chin, chout, empty=last, freq=False))
            chin, chout = chout, chout * 2

    def forward(self, x):
        spec = x.unsqueeze(2).expand(-1, -1, 16, -1)
        xt = x
        outs = []
        for idx, encode in enumerate(self.freq_encoder):
            spec = encode(spec)
            tenc = self.time_encoder[idx]
            xt = tenc(xt)
            outs.append(xt.mean(dim=-1))
        return torch.cat(outs, dim=1), spec.mean(dim=(2, 3))
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return snippet_ports(tmp_path_factory, SOURCE, "2,32", "depth")


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), length=st.sampled_from([16, 24, 32, 40]), depth=st.integers(2, 3),
       seed=st.integers(0, 2 ** 16))
def test_paths_of_two_ranks_meet_in_torchs_order_and_match_torch(ported, batch, length, depth, seed):
    assert_matches_torch(ported(depth), seed, (batch, 2, length))
