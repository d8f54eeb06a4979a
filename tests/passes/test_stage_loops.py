"""A pyramid transformer's stage loop folds its tokens back into an image on every turn but the last (PVT v1, Twins:
`if i != self.num_stages - 1: x = x.reshape(B, H, W, -1).permute(0, 3, 1, 2)` as the loop's last statement). The
next turn takes what that `if` leaves and the code after the loop what its other path leaves (porter/passes/
last_turn.py), so nothing converts between stages: before, the join took torch's order on both paths, two
Transposes a stage. The stages are reached as `getattr(self, f"patch_embed{i + 1}")` of layers and Parameters set by
`setattr` under the same pattern (PVT v1: a stub before, `if on a tensor value`), or zipped from ModuleLists
(Twins' `enumerate(zip(...))` tested against `len(self.depths) - 1`). The guard spelled `i + 1 < n`, `n - 1 != i`
and its opposite `if i == n - 1: ... else: <fold>` are read alike. Sizes drawn by hypothesis (batch 1, odd sizes);
compared eagerly and under XLA."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Embed(nn.Module):
    def __init__(self, cin, cout, patch):
        super().__init__()
        self.proj = nn.Conv2d(cin, cout, patch, stride=patch)
        self.norm = nn.LayerNorm(cout)

    def forward(self, x):
        x = self.proj(x)
        _, _, H, W = x.shape
        return self.norm(x.flatten(2).transpose(1, 2)), (H, W)


class Mix(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.dw = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)

    def forward(self, x, size):
        B, N, C = x.shape
        y = self.dw(x.transpose(1, 2).view(B, C, *size)).flatten(2).transpose(1, 2)
        return x + self.fc(torch.relu(y))


class Net(nn.Module):
    def __init__(self, how="range", dims=(6, 8, 10), classes=5):
        super().__init__()
        self.how = how
        self.num_stages = len(dims)
        self.depths = [1] * len(dims)
        self.embeds = nn.ModuleList()
        self.mixes = nn.ModuleList()
        cin = 3
        for i, dim in enumerate(dims):
            setattr(self, f"patch_embed{i + 1}", Embed(cin, dim, 2 if i else 1))
            setattr(self, f"pos{i + 1}", nn.Parameter(torch.randn(1, 1, dim) * 0.1))
            self.embeds.append(Embed(cin, dim, 2 if i else 1))
            self.mixes.append(Mix(dim))
            cin = dim
        self.head = nn.Linear(dims[-1], classes)

    def forward(self, x):
        B = x.shape[0]
        if self.how == "range":
            for i in range(self.num_stages):
                embed = getattr(self, f"patch_embed{i + 1}")
                pos = getattr(self, f"pos{i + 1}")
                x, (H, W) = embed(x)
                x = self.mixes[i](x + pos, (H, W))
                if i != self.num_stages - 1:
                    x = x.reshape(B, H, W, -1).permute(0, 3, 1, 2).contiguous()
        elif self.how == "zip":
            for i, (embed, mix) in enumerate(zip(self.embeds, self.mixes)):
                x, size = embed(x)
                x = mix(x, size)
                if i + 1 < len(self.depths):
                    x = x.reshape(B, *size, -1).permute(0, 3, 1, 2)
        else:
            for i in range(self.num_stages):
                x, size = self.embeds[i](x)
                x = self.mixes[i](x, size)
                if i == self.num_stages - 1:
                    x = x * 2.0
                else:
                    x = x.transpose(1, 2).reshape(B, -1, *size)
        return self.head(x.mean(1))
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    ports = snippet_ports(tmp_path_factory, SOURCE, "3,16,16", "how")
    return lambda how: PortedPair(ports(how), seed=2)


@pytest.mark.parametrize("how", ["range", "zip", "last"])
@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 2), height=st.sampled_from([8, 12, 20]), width=st.sampled_from([4, 12, 28]),
       seed=st.integers(0, 2**16))
def test_stage_loop_folds_tokens_without_converting(ported, how, batch, height, width, seed):
    pair, x = ported(how), random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
    assert count_transposes(pair.keras_model, [x]) <= 1  # the input's; none between the stages
