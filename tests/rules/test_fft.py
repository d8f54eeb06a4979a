"""torch.fft.fft / ifft / fft2 / ifft2 (porter/rules/complex_ops.py, runtime porter/runtime/complex_ops.py) against
real torch: shapes, dims and the three norms drawn by hypothesis; and a ported model taking the spectrum of its
input image (`torch.view_as_real(fft2(img))`, as vit-pytorch's simple_vit_with_fft) under XLA."""

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

OPS = ["fft", "ifft", "fft2", "ifft2"]


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(OPS), shape=st.lists(st.integers(1, 6), min_size=2, max_size=4),
       norm=st.sampled_from([None, "backward", "ortho", "forward"]), dim_choice=st.integers(0, 3),
       seed=st.integers(0, 2**16))
def test_fft_matches_torch(op, shape, norm, dim_choice, seed):
    import torch

    from porter.runtime import complex_ops

    x = random_input(seed, tuple(shape))
    rank = len(shape)
    if op.endswith("2"):
        dims = [(-2, -1), (0, rank - 1), (rank - 1, 0), (-1, -2)][dim_choice]
        kwargs = {"dim": dims, "norm": norm}
    else:
        kwargs = {"dim": [-1, 0, rank - 1, -rank][dim_choice], "norm": norm}
    want = getattr(torch.fft, op)(torch.from_numpy(x), **kwargs).resolve_conj().numpy()
    got = getattr(complex_ops, op)(x, **kwargs).numpy()
    np.testing.assert_allclose(got, want, atol=1e-4 * max(1.0, float(np.abs(want).max())))


SPECTRUM = '''
import torch
from torch import nn
from torch.fft import fft2
from einops import rearrange


class Spectrum(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(2 * 3, 4)

    def forward(self, img):
        freqs = torch.view_as_real(fft2(img))
        freqs = rearrange(freqs, 'b c h w ri -> b (h w) (c ri)')
        return self.proj(freqs)
'''


@pytest.fixture(scope="module")
def spectrum(tmp_path_factory):
    return port(tmp_path_factory.mktemp("fft"), textwrap.dedent(SPECTRUM), input_specs=("3,4,4",))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_ported_spectrum_matches_torch(spectrum, batch, seed):
    x = random_input(seed, (batch, 3, 4, 4))
    assert_same_outputs(spectrum, [x], tolerance=1e-5, what="fft2 spectrum")
    assert_same_outputs(spectrum, [x], tolerance=1e-5, what="fft2 spectrum, XLA", jit=True)


# FNet's token mixing: an FFT over the features, then over the tokens, handed `dim=` by keyword only (the rule
# handed it as `n` once), and the real part read as an attribute; `.imag` of a second spectrum beside it
FNET = '''
import torch
from torch import nn


class FNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 6)

    def forward(self, x):
        x = self.proj(x)
        mixed = torch.fft.fft(torch.fft.fft(x, dim=-1), dim=-2).real
        return mixed + 0.5 * torch.fft.ifft(x, norm="ortho", dim=1).imag
'''


@pytest.fixture(scope="module")
def fnet(tmp_path_factory):
    return port(tmp_path_factory.mktemp("fnet"), FNET, input_specs=("5,6",))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), tokens=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_fnet_mixing_matches_torch(fnet, batch, tokens, seed):
    x = random_input(seed, (batch, tokens, 6))
    assert_same_outputs(fnet, [x], tolerance=1e-5, what="FNet mixing")
    assert_same_outputs(fnet, [x], tolerance=1e-5, what="FNet mixing, XLA", jit=True)
