"""Channel slices `x[:, :c]` / `x[:, c:]` of a channels-last image whose rank porter cannot see (its norm made by a
factory porter cannot type: timm's ConvNormAct), as ReXNet's LinearBottleneck writes its partial shortcut
(`torch.cat([x[:, 0:self.in_channels] + shortcut, x[:, self.in_channels:]], dim=1)`): sliced on the last axis where
the image lies, no transpose (timm rexnet_100: 45 Transposes before, 1 now; tests/corpus/test_timm.py
converts that file, where the rank is unknown). Eagerly and under XLA, drawn batch and sizes, batch 1."""

import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.rules.op_ports import assert_matches_converting_at_the_boundary, port, random_input

SOURCE = '''
import torch
import torch.nn as nn

NORMS = {"batchnorm": nn.BatchNorm2d, "instance": nn.InstanceNorm2d}
CONVS = {"plain": nn.Conv2d, "lazy": nn.LazyConv2d}


def create_norm(channels, name="batchnorm"):
    return NORMS[name](channels)


def create_conv(cin, cout, kind="plain"):
    return CONVS[kind](cin, cout, 3, padding=1, bias=False)


class ConvNorm(nn.Module):
    def __init__(self, cin, cout, norm="batchnorm"):
        super().__init__()
        self.conv = create_conv(cin, cout)
        self.bn = create_norm(cout, norm)

    def forward(self, x):
        return self.bn(self.conv(x))


class Bottleneck(nn.Module):
    def __init__(self, in_chs, out_chs):
        super().__init__()
        self.in_channels = in_chs
        self.conv = ConvNorm(in_chs, out_chs)

    def forward(self, x):
        shortcut = x
        x = self.conv(x)
        return torch.cat([x[:, 0:self.in_channels] + shortcut, x[:, self.in_channels:]], dim=1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.blocks = nn.Sequential(Bottleneck(4, 6), Bottleneck(6, 9))

    def forward(self, x):
        return self.blocks(self.stem(x))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("partial_shortcut"), textwrap.dedent(SOURCE), input_specs=("3,6,6",))


@given(batch=st.integers(1, 3), height=st.sampled_from([1, 3, 6]), width=st.sampled_from([2, 5]),
       seed=st.integers(0, 2**16))
def test_partial_shortcut_matches_torch_converting_at_the_boundary(pair, batch, height, width, seed):
    assert_matches_converting_at_the_boundary(pair, random_input(seed, (batch, 3, height, width)), tolerance=1e-5)
    assert "to_channels_first(x)[" not in (pair.out_dir / "op_model_keras.py").read_text()
