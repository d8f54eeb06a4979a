"""Property tests of einops' `pack` / `unpack` (porter/rules/einops.py, runtime porter/runtime/einops.py) against
real einops: the runtime functions on hypothesis-drawn shapes ('*' standing for no, one or several axes), and a
ported model that packs a class token and register tokens with its patch tokens, as vit-pytorch's ViTs do."""

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

einops = pytest.importorskip("einops")


@settings(max_examples=30, deadline=None)
@given(batch=st.integers(1, 3), dim=st.integers(1, 5),
       stars=st.lists(st.lists(st.integers(1, 4), min_size=0, max_size=3), min_size=1, max_size=3),
       seed=st.integers(0, 2**16))
def test_pack_and_unpack_match_einops(batch, dim, stars, seed):
    import torch

    from porter.runtime.einops import einops_pack, einops_unpack

    tensors = [random_input(seed + i, (batch, *star, dim)) for i, star in enumerate(stars)]
    expected, expected_shapes = einops.pack([torch.from_numpy(t) for t in tensors], "b * d")
    packed, shapes = einops_pack(tensors, "b * d")
    np.testing.assert_array_equal(packed.numpy(), expected.numpy())
    assert [tuple(s) for s in shapes] == [tuple(s) for s in expected_shapes]
    for got, want in zip(einops_unpack(packed, shapes, "b * d"), tensors):
        np.testing.assert_array_equal(got.numpy(), want)


@settings(max_examples=15, deadline=None)
@given(lead=st.integers(1, 3), star=st.lists(st.integers(1, 3), min_size=1, max_size=2), seed=st.integers(0, 2**16))
def test_pack_with_star_first_matches_einops(lead, star, seed):
    import torch

    from porter.runtime.einops import einops_pack, einops_unpack

    tensors = [random_input(seed, (*star, lead)), random_input(seed + 1, (2, lead))]
    expected, expected_shapes = einops.pack([torch.from_numpy(t) for t in tensors], "* n")
    packed, shapes = einops_pack(tensors, "* n")
    np.testing.assert_array_equal(packed.numpy(), expected.numpy())
    first, second = einops_unpack(packed, shapes, "* n")
    np.testing.assert_array_equal(first.numpy(), tensors[0])
    np.testing.assert_array_equal(second.numpy(), tensors[1])


def test_pack_pattern_errors_are_clear():
    from porter.runtime.einops import einops_pack

    with pytest.raises(ValueError, match="one '\\*'"):
        einops_pack([random_input(0, (2, 3))], "b d")


PACK_MODEL = '''
import torch
import torch.nn as nn
from einops import pack, unpack, repeat
from einops.layers.torch import Rearrange


class Tokens(nn.Module):
    def __init__(self, dim=8, registers=2):
        super().__init__()
        self.embed = nn.Sequential(Rearrange("b c (h p) (w q) -> b h w (p q c)", p=2, q=2), nn.Linear(12, dim))
        self.cls = nn.Parameter(torch.randn(dim))
        self.registers = nn.Parameter(torch.randn(registers, dim))
        self.mix = nn.Linear(dim, dim)

    def forward(self, img):
        x = self.embed(img)
        b = x.shape[0]
        cls = repeat(self.cls, "d -> b d", b=b)
        r = repeat(self.registers, "n d -> b n d", b=b)
        x, ps = pack([cls, x, r], "b * d")
        x = self.mix(x).relu()
        cls, x, _ = unpack(x, ps, "b * d")
        return x.mean(dim=(1, 2)) + cls
'''


@pytest.fixture(scope="module")
def packed_model(tmp_path_factory):
    return port(tmp_path_factory.mktemp("einops_pack"), textwrap.dedent(PACK_MODEL), input_specs=("3,8,8",))


@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 3), size=st.sampled_from([4, 8]), seed=st.integers(0, 2**16))
def test_ported_pack_unpack_matches_torch(packed_model, batch, size, seed):
    x = random_input(seed, (batch, 3, size, size))
    assert_same_outputs(packed_model, [x], tolerance=1e-5, what=f"pack/unpack x{x.shape}")


def test_ported_pack_unpack_compiles_with_xla(packed_model):
    assert_same_outputs(packed_model, [random_input(0, (2, 3, 8, 8))], tolerance=1e-5, what="pack under XLA",
                        jit=True)
