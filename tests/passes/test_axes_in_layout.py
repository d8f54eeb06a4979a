"""Axes added to or removed from images held channels-last without moving them: `torch.stack(skips, dim=0)` of WaveNet's skip
outputs (the new axis stored first, the sum over it gives the image back channels-last) and CBAM's channel pool
`torch.cat((x.max(1)[0].unsqueeze(1), x.mean(1).unsqueeze(1)), dim=1)` (a map given a size-1 channel axis, held
last, so the 2-channel image goes to its convolution channels-last). Before, each skip and each pooled image was
transposed to torch's order and back. A TextCNN's `relu(conv(x)).squeeze(3)` of a (N, C, L, 1) map and the
`max_pool1d(...).squeeze(2)` after it squeeze the stored axis (before: a transpose to torch's order for each). The
ports match torch and trace only the boundary's Transposes.
"""

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, kind="stack"):
        super().__init__()
        self.kind = kind
        self.convs = nn.ModuleList([nn.Conv2d(3, 4, 3, padding=1) for _ in range(3)])
        self.spatial = nn.Conv2d(2, 1, 7, padding=3)
        self.strip = nn.Conv2d(3, 4, (2, 5))

    def forward(self, x):
        if self.kind == "squeeze":
            y = torch.relu(self.strip(x)).squeeze(3)
            return F.max_pool1d(y, y.size(2)).squeeze(2)
        if self.kind == "stack":
            skips = []
            for conv in self.convs:
                skips.append(conv(x))
            return torch.stack(skips, dim=0).sum(dim=0)
        pooled = torch.cat((torch.max(x, 1)[0].unsqueeze(1), torch.mean(x, 1).unsqueeze(1)), dim=1)
        return x * torch.sigmoid(self.spatial(pooled))
'''


def test_axes_added_and_removed_where_the_image_lies(tmp_path_factory):
    ported = snippet_ports(tmp_path_factory, SOURCE, "3,6,5", "kind")
    x = random_input(4, (2, 3, 6, 5))
    for kind in ("stack", "pool", "squeeze"):
        assert_matches_converting_at_the_boundary(PortedPair(ported(kind), seed=4), x)
