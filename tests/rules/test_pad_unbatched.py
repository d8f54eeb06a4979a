"""Padding modules on torch's unbatched form (one dim fewer than a batch of images) and on tensors of unknown rank
held in torch's order. RWKV shifts a (B, T, C) sequence one step along T with `nn.ZeroPad2d((0, 0, 1, -1))`: torch
reads it as an unbatched (C, H, W) image. porter took the pad for a channels-last 4-d image layer: the sequence was
converted to channels-last (a wrong shape out, or a crash two layers on). Now the pad takes torch's unbatched form
and a tensor of unknown rank in torch's order as they lie (no Transpose), and a block whose first layer is such a
pad no longer prefers channels-last for it. Images (rank 4) still pad channels-last. Each case matches torch for
hypothesis-drawn sizes and paddings (negative ones crop), eagerly and under XLA."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Mix(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.time_shift = nn.{pad}
        self.mix = nn.Parameter(torch.linspace(0.1, 0.9, dim).view(1, 1, dim))
        self.key = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        xx = self.time_shift(x)
        return self.key(x * self.mix + xx * (1 - self.mix))


class OpModel(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.emb = nn.Linear(3, dim)
        self.mix = Mix(dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return self.norm(self.mix(self.emb(x)))
'''

PADS = {
    "zero_shift": "ZeroPad2d((0, 0, 1, -1))",
    "zero_grow_and_crop": "ZeroPad2d((0, 0, 2, -2))",
    "constant_shift": "ConstantPad2d((0, 0, 1, -1), 0.5)",
    "replicate_shift": "ReplicationPad2d((0, 0, 1, -1))",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    sources = {name: textwrap.dedent(SOURCE).replace("{pad}", pad) for name, pad in PADS.items()}
    return port_cache(tmp_path_factory, sources, input_specs=("7,3",))


@pytest.mark.parametrize("name", sorted(PADS))
@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), length=st.sampled_from([3, 5, 8]), seed=st.integers(0, 2**16))
def test_pad_on_sequences_matches_torch(ported, name, batch, length, seed):
    x = random_input(seed, (batch, length, 3))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} {x.shape}")


@pytest.mark.parametrize("name", sorted(PADS))
def test_pad_on_sequences_traces_no_transpose(ported, name):
    x = random_input(0, (2, 7, 3))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} XLA", jit=True)
    assert count_transposes(ported(name).keras_model, [x]) == 0
