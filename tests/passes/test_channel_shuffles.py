"""Channel shuffles written the two other ways ShuffleNet v2 ports write them: `x.reshape(b, g, c // g, h, w)
.permute(0, 2, 1, 3, 4).flatten(1, 2)` and `einops.rearrange(x, "b (g c) h w -> b (c g) h w", g=g)`. On an image held
channels-last both regroup the channel axis only: a reshape and a gather along the channels, never a Transpose of
the image (before: one per shuffle, plus a conversion back to torch's order after the permute). The ports match
torch and trace only the boundary's Transposes.
"""

import pytest

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

SOURCE = '''
import torch
import torch.nn as nn
from einops import rearrange


def shuffle_permute(x, groups):
    b, c, h, w = x.shape
    x = x.reshape(b, groups, c // groups, h, w).permute(0, 2, 1, 3, 4)
    return x.flatten(1, 2)


def shuffle_einops(x, groups):
    return rearrange(x, "b (g c) h w -> b (c g) h w", g=groups)


class Net(nn.Module):
    def __init__(self, how="permute", groups=2):
        super().__init__()
        self.how = how
        self.groups = groups
        self.conv = nn.Conv2d(3, 6, 1)
        self.conv2 = nn.Conv2d(6, 6, 3, padding=1, groups=3)

    def forward(self, x):
        x = self.conv(x)
        x = shuffle_permute(x, self.groups) if self.how == "permute" else shuffle_einops(x, self.groups)
        return self.conv2(x)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """how -> output folder of the snippet's port."""
    return snippet_ports(tmp_path_factory, SOURCE, "3,5,7", "how")


@pytest.mark.parametrize("how", ["permute", "einops"])
def test_channel_shuffles_match_torch_without_transposing_the_image(ported, how):
    out = ported(how)
    assert "permute_axes" not in (out / "op_model_keras.py").read_text()
    assert_matches_converting_at_the_boundary(PortedPair(out, seed=3), random_input(3, (2, 3, 5, 7)))
