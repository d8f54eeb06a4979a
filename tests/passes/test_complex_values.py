"""Complex values as state-space models write them (S4D: `C = torch.randn(h, n, dtype=torch.cfloat)` kept as
`nn.Parameter(torch.view_as_real(C))`; `A = -torch.exp(self.log_A_real) + 1j * self.A_imag`): TensorFlow draws no
complex normal (the port did not build) and adds no float to a complex (a crash at call). The runtime draws the
real and imaginary parts with variance 1/2 each, as torch does, and a real tensor meeting a complex number or tensor
is cast to complex, as torch promotes. The port matches torch."""

import textwrap

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import math

import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, h=4, n=6, dt=0.1):
        super().__init__()
        C = torch.randn(h, n // 2, dtype=torch.cfloat)
        self.C = nn.Parameter(torch.view_as_real(C))
        self.register_buffer("log_A_real", torch.log(0.5 * torch.ones(h, n // 2)))
        self.register_buffer("A_imag", math.pi * torch.arange(n // 2).float().repeat(h, 1))
        self.dt = dt

    def forward(self, u):  # (B, h, L)
        L = u.shape[-1]
        C = torch.view_as_complex(self.C)
        A = -torch.exp(self.log_A_real) + 1j * self.A_imag
        dtA = A * self.dt
        K = dtA.unsqueeze(-1) * torch.arange(L)
        C = C * (torch.exp(dtA) - 1.) / A
        kernel = 2 * torch.einsum('hn,hnl->hl', C, torch.exp(K)).real
        return u * kernel
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("complex_values"), textwrap.dedent(SOURCE), input_specs=("4,5",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), length=st.sampled_from([1, 5, 8]))
def test_port_matches_torch(pair, seed, batch, length):
    assert_same_outputs(pair, [random_input(seed, (batch, 4, length))], tolerance=1e-4)


def test_complex_normal_draws_have_torchs_spread():
    import tensorflow as tf

    from porter.runtime.tensor_ops import randn

    drawn = randn(20000, dtype=tf.complex64).numpy()
    expected = torch.randn(20000, dtype=torch.cfloat).numpy()
    assert drawn.dtype == np.complex64
    assert abs(drawn.real.var() - expected.real.var()) < 0.05 and abs(drawn.imag.var() - 0.5) < 0.05
