"""Channel shuffles written the other ways ShuffleNet v2 ports write them: `x.reshape(b, g, c // g, h, w)
.permute(0, 2, 1, 3, 4).flatten(1, 2)`, `einops.rearrange(x, "b (g c) h w -> b (c g) h w", g=g)`, a view that splits
the channels and merges the spatial dims at once (`x.view(b, g, c // g, h * w).transpose(1, 2)` then
`.reshape(b, c, h, w)`: rules/view_categories.py) and `x.unflatten(1, (g, -1)).transpose(1, 2).flatten(1, 2)`. On an
image held channels-last each regroups the channel axis only: a reshape and a gather along the channels, never a
Transpose of the image (before: one per shuffle, plus a conversion back to torch's order after the permute; the
last two: three each). The ports match torch and trace only the boundary's Transposes.
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


def shuffle_split_merge(x, groups):
    b, c, h, w = x.size()
    x = x.view(b, groups, c // groups, h * w).transpose(1, 2)
    return x.reshape(b, c, h, w)


def shuffle_unflatten(x, groups):
    return x.unflatten(1, (groups, -1)).transpose(1, 2).flatten(1, 2)



class Net(nn.Module):
    def __init__(self, how="permute", groups=2):
        super().__init__()
        self.how = how
        self.groups = groups
        self.conv = nn.Conv2d(3, 6, 1)
        self.conv2 = nn.Conv2d(6, 6, 3, padding=1, groups=3)

    def forward(self, x):
        x = self.conv(x)
        if self.how == "permute":
            x = shuffle_permute(x, self.groups)
        elif self.how == "einops":
            x = shuffle_einops(x, self.groups)
        elif self.how == "split_merge":
            x = shuffle_split_merge(x, self.groups)
        else:
            x = shuffle_unflatten(x, self.groups)
        return self.conv2(x)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """how -> output folder of the snippet's port."""
    return snippet_ports(tmp_path_factory, SOURCE, "3,5,7", "how")


@pytest.mark.parametrize("how", ["permute", "einops", "split_merge", "unflatten"])
def test_channel_shuffles_match_torch_without_transposing_the_image(ported, how):
    out = ported(how)
    assert "permute_axes" not in (out / "op_model_keras.py").read_text()
    assert_matches_converting_at_the_boundary(PortedPair(out, seed=3), random_input(3, (2, 3, 5, 7)))
