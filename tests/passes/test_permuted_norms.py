"""A norm over the channels written as a permute sandwich (timm's LayerNorm2d: `x.permute(0, 2, 3, 1)`,
`F.layer_norm` over the last dim, `x.permute(0, 3, 1, 2)`), built through a constructor argument as timm's ConvNeXt
does, and a block whose MLP runs on the permuted image (`permute(0, 2, 3, 1)` -> an untyped norm -> Linear layers ->
`permute(0, 3, 1, 2)`), its image scaled by `gamma.reshape(1, -1, 1, 1)` after an untyped activation (an image of
unknown rank held channels-last: the per-channel scale is broadcast to it and moved channels-last): a forward whose first op on its image moves the channels last takes the image channels-last,
so both permutes are relabellings and the norm runs over the stored channel axis. The port matches torch (eager and
XLA) for drawn widths, sizes, batches and weights, and traces only the boundary's Transposes.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm2d(nn.LayerNorm):
    def __init__(self, num_channels, eps=1e-6):
        super().__init__(num_channels, eps=eps)

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        x = x.permute(0, 3, 1, 2)
        return x


class Mlp(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc1 = nn.Linear(width, 2 * width)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(2 * width, width)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, width, norm_layer_cl=nn.LayerNorm, act_layer=nn.GELU):
        super().__init__()
        self.conv_dw = nn.Conv2d(width, width, 3, padding=1, groups=width)
        self.act = act_layer()
        self.gamma = nn.Parameter(torch.linspace(0.5, 1.5, width))
        self.norm = norm_layer_cl(width)
        self.mlp = Mlp(width)

    def forward(self, x):
        shortcut = x
        x = self.act(self.conv_dw(x))
        x = x * self.gamma.reshape(1, -1, 1, 1)
        x = x.permute(0, 2, 3, 1)
        x = self.norm(x)
        x = self.mlp(x)
        x = x.permute(0, 3, 1, 2)
        return x + shortcut


class Net(nn.Module):
    def __init__(self, width=8, norm_layer=LayerNorm2d):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), norm_layer(width))
        self.block = Block(width)
        self.norm = norm_layer(width)
        self.head = nn.Linear(width, 5)

    def forward(self, x):
        x = self.norm(self.block(self.stem(x)))
        return self.head(x.mean((2, 3)))
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """name -> output folder of the snippet's port (Net's defaults)."""
    return snippet_ports(tmp_path_factory, SOURCE, "3,16,16")


@settings(max_examples=3, deadline=None)
@given(width=st.sampled_from([1, 3, 8]), batch=st.integers(1, 2), size=st.integers(2, 9),
       seed=st.integers(0, 2**16))
def test_permute_sandwich_norms_match_torch_and_convert_only_at_the_boundary(ported, width, batch, size, seed):
    pair = PortedPair(ported("convnext"), init_args={"width": width}, seed=seed)
    x = random_input(seed, (batch, 3, size, size))
    assert_matches_converting_at_the_boundary(pair, x)


def test_the_sandwich_norm_takes_its_image_channels_last(ported):
    code = (ported("convnext") / "op_model_keras.py").read_text()
    norm = code.split("class LayerNorm2d")[1].split("\nclass ")[0]
    assert 'porter_layout = "channels_last"' in norm
    assert "permute" not in norm.split("def call")[1]
