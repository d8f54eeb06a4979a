"""porter.frontend.first_layer: forward's tensor arguments and the layer that first reads the first one."""

import textwrap

import pytest

from porter.frontend.first_layer import first_layer, forward_signature
from porter.frontend.source import parse_source

BLOCKS = '''
import torch.nn as nn


class Stem(nn.Module):
    def __init__(self, channels, width=16):
        super().__init__()
        self.conv = nn.Conv2d(in_channels=channels, out_channels=width, kernel_size=3)

    def forward(self, x):
        return self.conv(x)


class Net(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.stem = Stem(channels * 2)
        self.head = nn.Linear(16, 10)

    def forward(self, images, *extra, scale=1.0):
        features = self.stem(images)
        return self.head(features.mean((2, 3)))


class Flat(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x, mask=None):
        x = x.flatten(1)
        return self.fc(x)


class Twice(nn.Module):
    def __init__(self, big=False):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        if big:
            self.fc = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc(x)


def conv(cin, cout):
    return [nn.Conv2d(cin, cout, 3), nn.ReLU()]


class Unpacked(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Sequential(*conv(3, 8), nn.Conv2d(8, 4, 1))

    def forward(self, x):
        return self.block(x)


class HandsOn(nn.Module):
    def __init__(self, sizes=(1, 2)):
        super().__init__()
        self.stem = Stem(*sizes)

    def forward(self, x):
        return self.stem(x)
'''


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    path = tmp_path_factory.mktemp("first_layer") / "model.py"
    path.write_text(textwrap.dedent(BLOCKS))
    return parse_source(path)


def test_forward_signature_counts_tensor_arguments(source):
    net, flat = forward_signature(source, "Net"), forward_signature(source, "Flat")
    assert (net.names, net.required, net.variadic) == (("images",), 1, True) and net.accepts(3)
    assert (flat.names, flat.required) == (("x", "mask"), 1) and flat.accepts(2) and not flat.accepts(3)


def test_first_layer_follows_in_file_classes_with_their_arguments(source):
    layer = first_layer(source, "Net")
    assert (layer.kind, layer.short_name, layer.size, layer.spatial) == ("conv", "Conv2d", 6, 2)
    assert first_layer(source, "Net", {"channels": 1}).size == 2


def test_no_first_layer_when_the_input_is_changed_first_or_the_layer_is_ambiguous(source):
    assert first_layer(source, "Flat") is None  # x.flatten(1) comes first
    assert first_layer(source, "Twice") is None  # self.fc is assigned twice


def test_a_starred_list_first_is_not_read_past(source):
    """`nn.Sequential(*conv(3, 8), nn.Conv2d(8, 4, 1))`: the helper's list comes first; the Conv2d after it is not
    the first layer (it was, and a correct `--input-shape 3,H,W` was refused: exit 2)."""
    assert first_layer(source, "Unpacked") is None
    assert first_layer(source, "HandsOn").size is None  # (`Stem(*sizes)`: what the star hands is not read)
