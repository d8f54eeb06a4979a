"""A torch layer's subclass whose forward calls `super().forward(x)` (WaveNet's causal `nn.Conv1d` trimming its
output, a `nn.Conv2d` cropping its border) takes its input in the layer's own layout: the model's input is made
channels-last once at the boundary. Before, the subclass read as a module of unknown layout, the first call fixed it
to torch's order, and every block around it converted both ways: the WaveNet below traced 17 Transposes, now only
the boundary's. Both match torch at batch 1 and 2, eagerly and under XLA."""

import pytest

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

SOURCE = '''
import torch
import torch.nn as nn


class CausalConv1d(nn.Conv1d):
    def __init__(self, cin, cout, k, dilation=1):
        super().__init__(cin, cout, k, padding=(k - 1) * dilation, dilation=dilation)
        self.trim = (k - 1) * dilation

    def forward(self, x):
        out = super().forward(x)
        return out[:, :, :-self.trim] if self.trim else out


class CroppedConv2d(nn.Conv2d):
    def forward(self, x):
        return super().forward(x)[:, :, 1:-1, 1:-1]


class WaveBlock(nn.Module):
    def __init__(self, ch, skip, d):
        super().__init__()
        self.filt = CausalConv1d(ch, ch, 2, d)
        self.gate = CausalConv1d(ch, ch, 2, d)
        self.res = nn.Conv1d(ch, ch, 1)
        self.skip = nn.Conv1d(ch, skip, 1)

    def forward(self, x):
        z = torch.tanh(self.filt(x)) * torch.sigmoid(self.gate(x))
        return x + self.res(z), self.skip(z)


class Net(nn.Module):
    def __init__(self, kind="wavenet"):
        super().__init__()
        self.kind = kind
        if kind == "wavenet":
            self.inp = CausalConv1d(2, 8, 2)
            self.blocks = nn.ModuleList([WaveBlock(8, 6, 2 ** i) for i in range(3)])
            self.out = nn.Sequential(nn.ReLU(), nn.Conv1d(6, 3, 1))
        else:
            self.inp = CroppedConv2d(2, 8, 3, padding=2)
            self.out = nn.Sequential(nn.ReLU(), CroppedConv2d(8, 3, 3, padding=2))

    def forward(self, x):
        x = self.inp(x)
        if self.kind != "wavenet":
            return self.out(x)
        skips = 0
        for block in self.blocks:
            x, s = block(x)
            skips = skips + s
        return self.out(skips)
'''

SHAPES = {"wavenet": (2, 37), "cropped": (2, 9, 11)}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return {kind: snippet_ports(tmp_path_factory, SOURCE, ",".join(map(str, shape)), "kind")(kind)
            for kind, shape in SHAPES.items()}


@pytest.mark.parametrize("kind", sorted(SHAPES))
@pytest.mark.parametrize("batch", [1, 2])
def test_layer_subclass_takes_its_layers_layout(ported, kind, batch):
    x = random_input(batch, (batch, *SHAPES[kind]))
    assert_matches_converting_at_the_boundary(PortedPair(ported[kind], seed=batch), x)
