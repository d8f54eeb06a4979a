"""A channel shuffle written with `batch, channels, height, width = x.size()` (pytorchcv's `channel_shuffle`,
IGCV3's units) on the result of a layer porter cannot type (a norm made by a helper that takes a layer maker or a
layer: `create_layer(normalization, channels)`): the call hands back a channels-last image of unknown rank, and the
four names unpacked from its size say it has four dims. Knowing that, the view / transpose / view regroups the
channel axis where it is stored (before: the image went to torch's layout and back around every shuffle, igcv3_w1
97 Transposes, this snippet 7). The port matches torch."""

import pytest

from porter.verify.harness import count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import port, random_input

MODEL = '''
from inspect import isfunction

import torch
from torch import nn


def channel_shuffle(x, groups):
    batch, channels, height, width = x.size()
    channels_per_group = channels // groups
    x = x.view(batch, groups, channels_per_group, height, width)
    x = torch.transpose(x, 1, 2).contiguous()
    x = x.view(batch, channels, height, width)
    return x


def create_layer(maker, channels):
    if isfunction(maker):
        return maker(channels)
    return maker


class Block(nn.Module):
    def __init__(self, channels, normalization):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 1, groups=2)
        self.bn = create_layer(normalization, channels)
        self.dw = nn.Conv2d(channels, channels, 3, padding=1, groups=channels)

    def forward(self, x):
        x = self.bn(self.conv(x))
        x = channel_shuffle(x, 2)
        return self.dw(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.blocks = nn.Sequential(Block(8, lambda c: nn.BatchNorm2d(c)), Block(8, nn.BatchNorm2d(8)))
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.head(x.mean(dim=(2, 3)))
'''


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("size_unpack_rank"), MODEL, input_specs=("3,8,8",))


def test_a_shuffle_unpacking_four_sizes_of_an_untyped_result_stays_channels_last(net):
    x = random_input(0, (2, 3, 8, 8))
    keras_model = assert_built_matches_torch(net, x)
    assert count_transposes(keras_model, [x]) <= 1
    assert "to_channels_first" not in (net.out_dir / "op_model_keras.py").read_text()
