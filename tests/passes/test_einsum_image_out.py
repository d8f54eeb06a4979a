"""An einsum that mixes the channels of a channels-last image (`torch.einsum('bchw,oc->bohw', x, self.w)`, a 1x1
convolution written by hand; the rank-3 `bcl,oc->bol` of a Conv1d's output): its inputs were relabelled in the
order they are stored, its output left in torch's order, so the block returned torch's layout and its caller
converted back (one Transpose per such block). An output with the batch and spatial labels of a channels-last input
is now written channels-last (`bhwc,oc->bhwo`). Compared with torch, eagerly and under XLA, for hypothesis-drawn
sizes and batches (odd sizes, batch 1)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

IMAGE_MIX = '''
import torch
import torch.nn as nn


class ChannelMix(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.w = nn.Parameter(torch.randn(cout, cin) * 0.2)

    def forward(self, x):
        return torch.einsum('bchw,oc->bohw', x, self.w)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, 2, 1)
        self.mix = ChannelMix(8, 12)
        self.c2 = nn.Conv2d(12, 4, 3, 1, 1)

    def forward(self, x):
        y = self.mix(self.c1(x))
        return self.c2(y) + y.mean(1, keepdim=True)
'''

SEQUENCE_MIX = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 6, 3, 2, 1)
        self.w = nn.Parameter(torch.randn(5, 6) * 0.3)
        self.out = nn.Conv1d(5, 4, 1)

    def forward(self, x):
        return self.out(torch.einsum("bcl,oc->bol", self.conv(x), self.w).relu())
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    images = port_cache(tmp_path_factory, {"image": IMAGE_MIX})
    sequences = port_cache(tmp_path_factory, {"sequence": SEQUENCE_MIX}, input_specs=("3,10",))
    return lambda name: sequences(name) if name == "sequence" else images(name)


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), height=st.integers(1, 9), width=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_image_channel_mix_matches_torch(ported, batch, height, width, seed):
    pair = ported("image")
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)


def test_image_channel_mix_converts_only_at_the_boundary(ported):
    pair = ported("image")
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 9, 11))) <= 2  # (was 4)


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 12), seed=st.integers(0, 2**16))
def test_sequence_channel_mix_matches_torch(ported, batch, length, seed):
    pair = ported("sequence")
    x = random_input(seed, (batch, 3, length))
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert xla_transposes(pair.keras_model, x) <= 2
