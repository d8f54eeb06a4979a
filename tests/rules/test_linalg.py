"""Property tests of the linear-algebra rules (porter/rules/linalg.py) against real torch: QR (reduced, complete, R
only, the deprecated `torch.qr`), (square, wide and tall) `slogdet` (positive and negative determinants), `det`, `logdet`, `inverse`,
`linalg.solve` (a matrix, a vector and `left=False` right-hand side), `cholesky` (lower and upper), on drawn batch
and matrix sizes including 1x1 matrices and batch 1. Glow's invertible 1x1 convolution (a QR-drawn weight, the
weight's slogdet in float64 added to the log-likelihood) ports and matches."""

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, n=4):
        super().__init__()
        self.mix = nn.Linear(n, n)

    def forward(self, x):
        n = x.shape[-1]
        a = self.mix(x)
        eye = torch.eye(n)
        well = a + n * eye  # well conditioned
        q, r = torch.linalg.qr(well)
        qc, rc = torch.linalg.qr(torch.cat([a, a[..., :1]], -1), mode="complete")  # wide
        q_tall, r_tall = torch.linalg.qr(a[..., :1])  # tall
        _, r_only = torch.linalg.qr(well, mode="r")
        q_old, r_old = torch.qr(well)
        sign, logabsdet = torch.slogdet(a)
        sign2, logabsdet2 = torch.linalg.slogdet(well)
        det = torch.det(well) + well.det()
        logdet = torch.logdet(well @ well.transpose(-1, -2) + eye)
        inv = torch.inverse(well) + torch.linalg.inv(well)
        rhs = a[..., :2]
        solved = torch.linalg.solve(well, rhs)
        solved_vec = torch.linalg.solve(well, a[..., 0])
        solved_right = torch.linalg.solve(well, a, left=False)
        spd = well @ well.transpose(-1, -2) + eye
        lower = torch.linalg.cholesky(spd)
        upper = torch.linalg.cholesky(spd, upper=True)
        upper_old = torch.cholesky(spd, True)
        return (q, r, qc, rc, q_tall, r_tall, r_only, q_old, r_old, sign, logabsdet, sign2, logabsdet2, det, logdet, inv, solved,
                solved_vec, solved_right, lower, upper, upper_old)
'''

GLOW = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    """Glow's InvConv2d (rosinality/glow-pytorch): an orthogonal weight drawn by QR."""

    def __init__(self, in_channel=4):
        super().__init__()
        weight = torch.randn(in_channel, in_channel)
        q, _ = torch.linalg.qr(weight)
        weight = q.unsqueeze(2).unsqueeze(3)
        self.weight = nn.Parameter(weight)

    def forward(self, input):
        _, _, height, width = input.shape
        out = F.conv2d(input, self.weight)
        logdet = height * width * torch.slogdet(self.weight.squeeze().double())[1].float()
        return out, logdet
'''


@pytest.fixture(scope="module")
def glow(tmp_path_factory):
    return port(tmp_path_factory.mktemp("glow_invconv"), textwrap.dedent(GLOW), input_specs=("4,5,7",))


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), n=st.sampled_from([1, 2, 3, 5]))
def test_linear_algebra_matches_torch(tmp_path_factory, seed, batch, n):
    pair = _ported(tmp_path_factory, n)
    assert_same_outputs(pair, [random_input(seed, (batch, n, n))], tolerance=1e-4)


_PORTS = {}


def _ported(tmp_path_factory, n):
    """One port per matrix size (the model's Linear is n x n)."""
    if n not in _PORTS:
        source = textwrap.dedent(SOURCE).replace("def __init__(self, n=4)", f"def __init__(self, n={n})")
        _PORTS[n] = port(tmp_path_factory.mktemp(f"linalg{n}"), source, input_specs=(f"{n},{n}",))
    return _PORTS[n]


def test_the_runtime_names_torchs_result_fields():
    import tensorflow as tf

    from porter.runtime.linalg import linalg_qr, slogdet
    a = tf.constant(np.diag([2.0, -3.0]).astype("float32"))
    assert float(slogdet(a).sign) == -1.0 and np.isclose(float(slogdet(a).logabsdet), np.log(6.0))
    assert linalg_qr(a, mode="r").Q.shape == (0,)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.sampled_from([1, 5]),
       width=st.sampled_from([3, 8]))
def test_glow_invertible_conv_matches_torch(glow, seed, batch, height, width):
    assert_same_outputs(glow, [random_input(seed, (batch, 4, height, width))], tolerance=1e-5)
