"""A forward parameter unsqueezed before its first layer (wav2vec2's feature extractor: a (B, T) waveform, `x =
x.unsqueeze(1)`, then `nn.Conv1d(1, ...)`; ESPnet's Conv2dSubsampling: a (B, T, F) spectrogram unsqueezed into a
one-channel image for `nn.Conv2d(1, ...)`): the conv's wish for a channels-last input was taken for the
parameter's own, so a (B, T) waveform was read as a rank-3 image (the port raised on it without `--input-shape`)
and a spectrogram was transposed in and back (2 Transposes that cancel). The unsqueeze now ends what the parameter's
first use says (passes/rank_changing_rebinds.py): both match torch, with no Transpose but the source's own."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

WAVEFORM = '''
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 8, 10, stride=5)
        self.proj = nn.Linear(8, 4)

    def forward(self, x):
        x = x.unsqueeze(1)
        x = self.conv(x)
        return self.proj(x.transpose(1, 2))
'''

SPECTROGRAM = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, odim=6):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, odim, 3, 2), nn.ReLU(), nn.Conv2d(odim, odim, 3, 2), nn.ReLU())

    def forward(self, x):
        x = x.unsqueeze(1)
        x = self.conv(x)
        b, c, t, f = x.size()
        return x.transpose(1, 2).contiguous().view(b, t, c * f)
'''


@pytest.fixture(scope="module")
def waveform(tmp_path_factory):
    return port(tmp_path_factory.mktemp("waveform"), textwrap.dedent(WAVEFORM), input_specs=())


@pytest.fixture(scope="module")
def spectrogram(tmp_path_factory):
    return port(tmp_path_factory.mktemp("spectrogram"), textwrap.dedent(SPECTROGRAM), input_specs=("29,21",))


def test_the_waveform_needs_no_transpose(waveform):
    waveform.build()
    assert xla_transposes(waveform.keras_model, random_input(0, (2, 63))) == 0


def test_the_spectrogram_keeps_only_its_own_transpose(spectrogram):
    spectrogram.build()
    assert xla_transposes(spectrogram.keras_model, random_input(0, (2, 29, 21))) == 1  # `x.transpose(1, 2)`'s


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), length=st.integers(10, 40))
def test_the_waveform_matches_torch(waveform, seed, batch, length):
    assert_same_outputs(waveform, [random_input(seed, (batch, length))])


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), frames=st.integers(7, 31), bins=st.integers(7, 23))
def test_the_spectrogram_matches_torch(spectrogram, seed, batch, frames, bins):
    assert_same_outputs(spectrogram, [random_input(seed, (batch, frames, bins))])
