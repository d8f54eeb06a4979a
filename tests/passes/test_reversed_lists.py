"""`for f in reversed(laterals[:-1])` (an FPN's top-down path) iterates the images as the list holds them: before,
`reversed` was an unknown call, handed the images in torch's order while the loop bound them as held channels-last,
and `top = F.interpolate(top, size=f.shape[-2:]) + f` failed with incompatible shapes. The port matches torch and
traces only the boundary's Transposes."""

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.downs = nn.ModuleList([nn.Conv2d(3, 4, 3, 2, 1), nn.Conv2d(4, 8, 3, 2, 1), nn.Conv2d(8, 8, 3, 2, 1)])
        self.lateral = nn.ModuleList([nn.Conv2d(c, 4, 1) for c in (4, 8, 8)])
        self.out = nn.Conv2d(4, 2, 3, padding=1)

    def forward(self, x):
        feats = []
        for down in self.downs:
            x = F.relu(down(x))
            feats.append(x)
        laterals = [conv(f) for conv, f in zip(self.lateral, feats)]
        top = laterals[-1]
        for f in reversed(laterals[:-1]):
            top = F.interpolate(top, size=f.shape[-2:], mode="nearest") + f
        for layer in reversed(self.lateral):
            assert layer.out_channels == 4
        return self.out(top)
'''


def test_reversed_list_of_images_keeps_their_layout(tmp_path_factory):
    out = snippet_ports(tmp_path_factory, SOURCE, "3,21,18")(None)
    assert "reversed(laterals[:-1])" in (out / "op_model_keras.py").read_text()
    for batch in (1, 2):
        assert_matches_converting_at_the_boundary(PortedPair(out, seed=4), random_input(batch, (batch, 3, 21, 18)))
