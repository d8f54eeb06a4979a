"""Property tests of the complex-number rules (porter/rules/complex_ops.py) against real torch: `torch.polar`,
`view_as_complex` / `view_as_real` round trips, complex products, `torch.outer` with torch's type promotion, and a
LLaMA-style model whose rotary embedding multiplies by `torch.polar` frequencies (eager and under XLA)."""

import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

OPS_MODEL = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.proj(x)
        {op}
        return y
'''

OPS = {
    "rotate_by_polar": ("angles = torch.outer(torch.arange(y.shape[1]), torch.ones(y.shape[-1] // 2) * 0.3)\n"
                        "        z = torch.view_as_complex(y.reshape(*y.shape[:-1], -1, 2))\n"
                        "        y = torch.view_as_real(z * torch.polar(torch.ones_like(angles), angles)).flatten(2)"),
    "complex_from_parts": ("z = torch.complex(y, y * 2.0) * torch.complex(x, -x)\n"
                           "        y = torch.view_as_real(z).sum(-1)"),
    "round_trip": "y = torch.view_as_real(torch.view_as_complex(y.reshape(y.shape[0], y.shape[1], 4, 2))).flatten(2)",
    "outer_float": "y = y + torch.outer(y[0, :, 0], y[0, 0, :]).unsqueeze(0)",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    sources = {name: textwrap.dedent(OPS_MODEL).replace("{op}", op) for name, op in OPS.items()}
    return cached(lambda name: port(tmp_path_factory.mktemp(name), sources[name], input_specs=("5,8",)))


@pytest.mark.parametrize("name", sorted(OPS))
@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16), scale=st.sampled_from([0.1, 1.0, 30.0]))
def test_complex_ops_match_torch(ported, name, batch, seed, scale):
    pair = ported(name)
    x = random_input(seed, (batch, 5, 8), scale)
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} x{x.shape} scale {scale}")


@pytest.mark.parametrize("name", sorted(OPS))
def test_complex_ops_compile_with_xla(ported, name):
    assert_same_outputs(ported(name), [random_input(1, (2, 5, 8))], tolerance=1e-5, what=f"{name} XLA", jit=True)


LLAMA = Path(__file__).resolve().parent / "llama_rotary.py"


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return port(tmp_path_factory.mktemp("llama"), LLAMA.read_text(), input_specs=("12:int64:0:100",))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), length=st.sampled_from([1, 5, 12]), seed=st.integers(0, 2**16))
def test_llama_with_complex_rotary_embeddings_matches_torch(llama, batch, length, seed):
    import numpy as np

    tokens = np.random.default_rng(seed).integers(0, 100, (batch, length)).astype(np.int64)
    assert_same_outputs(llama, [tokens], tolerance=1e-5, what=f"llama tokens {tokens.shape}")


def test_llama_compiles_with_xla_without_transposes(llama):
    import numpy as np

    tokens = np.random.default_rng(0).integers(0, 100, (2, 12)).astype(np.int64)
    assert_same_outputs(llama, [tokens], tolerance=1e-5, what="llama XLA", jit=True)
    assert count_transposes(llama.keras_model, [tokens]) <= 10  # the source's own: 5 per attention layer, no more
