"""A conv stack's feature map collapsed into a sequence for a time-major GRU (DeepSpeech2: `sizes = x.size()`, `x =
x.view(sizes[0], sizes[1] * sizes[2], sizes[3])`, `x.transpose(1, 2).transpose(0, 1)` into `nn.GRU` without
batch_first): `sizes = x.size()` of the channels-last map was a plain tuple, so nothing said `sizes[1] * sizes[2]`
merges the channels with the frequency axis; the map went to torch's order, the merged sequence was transposed
into the GRU and back out (3 Transposes). The sizes now know which is the channel count and which are spatial, the
view moves the map once into (B, T, C*F), and the GRU takes it with its time and batch axes swapped: one Transpose.
Matches torch for drawn sizes."""

import textwrap

import numpy as np

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, n_feats=16, hidden=8):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 4, kernel_size=3, stride=(2, 1), padding=1), nn.Hardtanh(0, 20))
        self.rnn = nn.GRU(4 * (n_feats // 2), hidden)

    def forward(self, x):
        x = self.conv(x)
        sizes = x.size()
        x = x.view(sizes[0], sizes[1] * sizes[2], sizes[3])
        x = x.transpose(1, 2).transpose(0, 1).contiguous()
        x, _ = self.rnn(x)
        return x.transpose(0, 1)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("spectrogram_collapse"), textwrap.dedent(SOURCE), input_specs=("1,16,21",))


def test_the_map_moves_once(pair):
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 1, 16, 21))) == 1  # (was 3)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), frames=st.integers(3, 25))
def test_port_matches_torch(pair, seed, batch, frames):
    assert_same_outputs(pair, [random_input(seed, (batch, 1, 16, frames))])


IDENTITY_VIEW = '''
import torch.nn as nn


class Att(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q = nn.Conv1d(d, d, 1)

    def forward(self, x):
        q = self.q(x).transpose(1, 2).softmax(-1)
        q = q.view(list(q.size()))
        return q.transpose(1, 2)


class OpModel(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.emb = nn.Embedding(20, d)
        self.att = Att(d)
        self.ffn = nn.Conv1d(d, d, 1)

    def forward(self, ids):
        x = self.emb(ids).transpose(1, 2)
        out = self.ffn(self.att(x) + x)
        return out.transpose(1, 2)
'''


@pytest.fixture(scope="module")
def identity(tmp_path_factory):
    return port(tmp_path_factory.mktemp("identity_view"), textwrap.dedent(IDENTITY_VIEW), input_specs=("9:int64:0:20",))


def test_a_view_to_its_own_sizes_keeps_the_layout(identity):
    """QANet's helpers view a tensor with `list(x.size())`: the tensor as it is held (was two Transposes)."""
    identity.build()
    ids = np.random.default_rng(0).integers(0, 20, (2, 9))
    assert xla_transposes(identity.keras_model, ids) == 0
    assert_same_outputs(identity, [ids])
