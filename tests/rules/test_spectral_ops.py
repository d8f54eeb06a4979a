"""Short-time Fourier transforms, windows and real FFTs (rules/spectral.py, runtime/spectral.py) against torch's own:
drawn n_fft, hop, window length and kind, centring and pad mode, normalisation, one- or two-sided spectra, batch
or none, odd signal lengths; istft of torch's own spectra with and without `length`; and a model computing a
magnitude spectrogram, a convolution over it, the inverse transform and an rfft/irfft round trip, ported and run
eagerly and under XLA."""

import numpy as np
import pytest
import tensorflow as tf
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from porter.runtime.spectral import hamming_window, hann_window, irfft, istft, rfft, stft
from tests.passes.snippet_ports import assert_matches_torch, snippet_ports


@st.composite
def transforms(draw):
    n_fft = draw(st.integers(2, 16))
    win_length = draw(st.integers(1, n_fft))
    hop = draw(st.integers(1, max(1, win_length)))
    center = draw(st.booleans())
    length = draw(st.integers(n_fft // 2 + 1 if center else n_fft, 40))
    return {"n_fft": n_fft, "win_length": win_length, "hop": hop, "center": center, "length": length,
            "window": draw(st.sampled_from([None, "hann", "hamming"])), "batch": draw(st.sampled_from([None, 1, 2])),
            "normalized": draw(st.booleans()), "onesided": draw(st.sampled_from([None, False])),
            "pad_mode": draw(st.sampled_from(["reflect", "constant"]))}


def _window(kind, length):
    if kind is None:
        return None
    return (torch.hann_window if kind == "hann" else torch.hamming_window)(length)


def _signal(case, seed):
    shape = (case["length"],) if case["batch"] is None else (case["batch"], case["length"])
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _torch_stft(case, x):
    return torch.stft(torch.from_numpy(x), case["n_fft"], case["hop"], case["win_length"],
                      _window(case["window"], case["win_length"]), center=case["center"], pad_mode=case["pad_mode"],
                      normalized=case["normalized"], onesided=case["onesided"], return_complex=True)


def _ours(case):
    window = _window(case["window"], case["win_length"])
    return {"hop_length": case["hop"], "win_length": case["win_length"],
            "window": None if window is None else tf.constant(window.numpy()), "center": case["center"],
            "normalized": case["normalized"], "onesided": case["onesided"]}


pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # (torch's advice on rectangular windows)


@settings(max_examples=60, deadline=None)
@given(case=transforms(), seed=st.integers(0, 2 ** 16))
def test_stft_matches_torch(case, seed):
    x = _signal(case, seed)
    expected = _torch_stft(case, x).numpy()
    got = stft(tf.constant(x), case["n_fft"], pad_mode=case["pad_mode"], return_complex=True, **_ours(case)).numpy()
    np.testing.assert_allclose(got, expected, atol=1e-4 * max(1.0, np.abs(expected).max()))


@settings(max_examples=60, deadline=None)
@given(case=transforms(), seed=st.integers(0, 2 ** 16), given_length=st.booleans())
def test_istft_matches_torch(case, seed, given_length):
    x = _signal(case, seed)
    z = _torch_stft(case, x)
    window = _window(case["window"], case["win_length"])
    length = case["length"] if given_length else None
    try:
        expected = torch.istft(z, case["n_fft"], case["hop"], case["win_length"], window, center=case["center"],
                               normalized=case["normalized"], onesided=case["onesided"], length=length).numpy()
    except RuntimeError:  # torch refuses windows whose overlap vanishes somewhere (NOLA)
        assume(False)
    assume(np.isfinite(expected).all())
    got = istft(tf.constant(z.numpy()), case["n_fft"], length=length, **_ours(case)).numpy()
    np.testing.assert_allclose(got, expected, atol=1e-3 * max(1.0, np.abs(expected).max()))


@settings(max_examples=30, deadline=None)
@given(length=st.integers(1, 20), periodic=st.booleans(), kind=st.sampled_from(["hann", "hamming"]))
def test_windows_match_torch(length, periodic, kind):
    ours, theirs = (hann_window, torch.hann_window) if kind == "hann" else (hamming_window, torch.hamming_window)
    np.testing.assert_allclose(ours(length, periodic).numpy(), theirs(length, periodic).numpy(), atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 7), min_size=1, max_size=3), n=st.one_of(st.none(), st.integers(1, 9)),
       norm=st.sampled_from([None, "ortho", "forward"]), dim=st.integers(-3, 2), seed=st.integers(0, 2 ** 16))
def test_real_ffts_match_torch(shape, n, norm, dim, seed):
    dim = dim % len(shape)
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    expected = torch.fft.rfft(torch.from_numpy(x), n=n, dim=dim, norm=norm)
    np.testing.assert_allclose(rfft(tf.constant(x), n=n, dim=dim, norm=norm).numpy(), expected.numpy(), atol=1e-4)
    try:
        back = torch.fft.irfft(expected, n=n, dim=dim, norm=norm).numpy()
    except RuntimeError:  # (no samples to make: one frequency and no n)
        assume(False)
    np.testing.assert_allclose(irfft(tf.constant(expected.numpy()), n=n, dim=dim, norm=norm).numpy(), back,
                               atol=1e-4)


SOURCE = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, n_fft=16, hop=4):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.conv = nn.Conv2d(1, 4, 3, padding=1)

    def forward(self, x):
        z = torch.stft(x, self.n_fft, self.hop, window=self.window, return_complex=True, normalized=True)
        y = self.conv(z.abs().unsqueeze(1)).mean(1)
        back = torch.istft(z, self.n_fft, self.hop, window=self.window, normalized=True, length=x.size(-1))
        echo = torch.fft.irfft(torch.fft.rfft(x), n=x.size(-1))
        return y.sum(-1).sum(-1, keepdim=True) + back + echo
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return snippet_ports(tmp_path_factory, SOURCE, "41", "hop")


@pytest.mark.parametrize("hop", [4, 8])
@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(9, 47), seed=st.integers(0, 2 ** 16))
def test_spectrogram_model_matches_torch(ported, hop, batch, length, seed):
    assert_matches_torch(ported(hop), seed, (batch, length))
