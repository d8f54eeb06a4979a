"""torch functions handed on as values and attention-backend contexts (denoising-diffusion-pytorch: its Attention's
`k, v = map(partial(torch.cat, dim=-2), ((mk, k), (mv, v)))` of memory key/values, GaussianDiffusion's
`partial(torch.clamp, min=-1., max=1.)`, Attend's `with torch.nn.attention.sdpa_kernel(backends):` around
`F.scaled_dot_product_attention`): each was a stub that raised, so the package's Unet did not run. `torch.cat`,
`torch.stack` and `torch.clamp` as values are the runtime's functions of torch's signature; the backend choice is a
context that changes nothing. The port matches torch for drawn sizes."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel


class OpModel(nn.Module):
    def __init__(self, dim=8, num_mem_kv=3):
        super().__init__()
        self.to_kv = nn.Linear(dim, dim * 2)
        self.mem_kv = nn.Parameter(torch.randn(2, num_mem_kv, dim))
        self.clip = partial(torch.clamp, min=-1.0, max=1.0)

    def forward(self, x):
        b = x.shape[0]
        k, v = self.to_kv(x).chunk(2, dim=-1)
        mk, mv = map(lambda t: t.unsqueeze(0).expand(b, -1, -1), self.mem_kv)
        k, v = map(partial(torch.cat, dim=-2), ((mk, k), (mv, v)))
        with sdpa_kernel([SDPBackend.MATH]):
            out = F.scaled_dot_product_attention(x, k, v)
        stacked = partial(torch.stack, dim=1)([out, x])
        return self.clip(stacked.sum(1))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("torch_function_partials"), textwrap.dedent(SOURCE), input_specs=("5,8",))


def test_no_stub_is_left(pair):
    assert "not_supported(" not in (pair.out_dir / "op_model_keras.py").read_text()


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), length=st.integers(1, 9))
def test_port_matches_torch(pair, seed, batch, length):
    assert_same_outputs(pair, [random_input(seed, (batch, length, 8))])
