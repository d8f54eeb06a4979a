"""A class whose call gives back an image of the channel count it was handed (an attention gate's `x * scale`, CBAM's
channel and spatial gates) tells its caller that count (HANDED_CHANNELS in the class's call, the caller's own count
at the call), and an elementwise op keeps the count of its channels-last operand: a flatten after such a block,
held in a Sequential or called directly, stays a reshape, the Linear's weight columns permuted at load time (a
held-out CBAM network traced 2 Transposes, now 1: the entry's)."""

import pytest

from porter.verify.harness import count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import port, random_input

MODEL = '''
import torch
from torch import nn


class ChannelGate(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        return x * torch.sigmoid(self.fc(self.pool(x)))


class SpatialGate(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 1, 3, padding=1)

    def forward(self, x):
        return x * torch.sigmoid(self.conv(x.mean(dim=1, keepdim=True)))


class Gates(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.channel = ChannelGate(channels)
        self.spatial = SpatialGate()

    def forward(self, x):
        return self.spatial(self.channel(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(), Gates(6))
        self.stem = nn.Conv2d(3, 6, 3, padding=1)
        self.gates = Gates(6)
        self.fc = nn.Linear(6 * 8 * 8, 4)
        self.fc_direct = nn.Linear(6 * 8 * 8, 4)

    def forward(self, x):
        held = self.fc(torch.flatten(self.features(x), 1))
        return held + self.fc_direct(self.gates(self.stem(x)).view(x.size(0), -1))
'''


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("handed_channels"), MODEL, input_specs=("3,8,8",))


def test_flatten_after_a_gate_stays_a_reshape(net):
    x = random_input(5, (2, 3, 8, 8))
    keras_model = assert_built_matches_torch(net, x)
    assert count_transposes(keras_model, [x]) == 1  # the entry's (3: each flatten in torch's order)
