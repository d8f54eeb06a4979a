"""A method calling itself (bearpaw/pytorch-pose's Hourglass: `_hour_glass_forward(n, x)` recursing with n - 1): its
own call took the result in torch's order while the method returned channels-last images, so the port converted
them again (a silent mismatch where channels, height and width agree, a shape error elsewhere), and the recursive
call did not hand `training` on (its BatchNorms ran in inference mode while training). The method is now translated
again taking what it returns, so the images stay channels-last through the recursion (2 Transposes, the model's
boundary), and its calls of itself hand the flag on."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch.nn as nn
import torch.nn.functional as F


class Hourglass(nn.Module):
    def __init__(self, c=4, depth=2):
        super().__init__()
        self.depth = depth
        self.up = nn.ModuleList([nn.Conv2d(c, c, 3, padding=1) for _ in range(depth)])
        self.low = nn.Conv2d(c, c, 3, padding=1)
        self.mid = nn.ModuleList([nn.Sequential(nn.Conv2d(c, c, 1), nn.BatchNorm2d(c)) for _ in range(depth)])

    def _hour_glass_forward(self, n, x):
        up1 = self.up[n - 1](x)
        low1 = F.max_pool2d(x, 2, stride=2)
        if n > 1:
            low2 = self._hour_glass_forward(n - 1, low1)
        else:
            low2 = self.low(low1)
        low3 = self.mid[n - 1](low2)
        return up1 + F.interpolate(low3, scale_factor=2)

    def forward(self, x):
        return self._hour_glass_forward(self.depth, x)


class OpModel(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.hg = Hourglass(c)
        self.head = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        return self.head(self.hg(self.stem(x)))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("recursive"), textwrap.dedent(SOURCE), input_specs=("3,8,8",))


def test_the_recursive_call_hands_training_on(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "self._hour_glass_forward(n - 1, low1, training=training)" in code


def test_images_stay_channels_last_through_the_recursion(pair):
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 8, 8))) == 2


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), size=st.sampled_from([4, 8, 12]))
def test_port_matches_torch(pair, seed, batch, size):
    # (4 channels, maps 4x4 inside: channels, height and width agree, where the old port ran and mismatched)
    assert_same_outputs(pair, [random_input(seed, (batch, 3, size, size))])
