"""einops over images held channels-last (porter/rules/einops.py, einops_pending.py), as lucidrains' U-Nets write
attention and weight standardization:
- `rearrange(t, 'b (h c) x y -> b h c (x y)', h=heads)` of a conv's output is a reshape where the image lies, the
  heads' order left pending for the einsums after it (before: the data moved, a Transpose per q, k and v);
- `rearrange(out, 'b h c (x y) -> b (h c) x y')` / `'b h (x y) d -> b (h d) x y'` of an einsum writes the einsum in
  the order of the image held channels-last (before: torch's order, then a Transpose for the conv after it);
- `reduce(weight, 'o ... -> o 1 1 1', 'mean')` of a conv kernel held (kh, kw, i, o) reduces the axes where they lie,
  the per-filter mean held as the kernel is (before: a Transpose of the kernel per reduce, and one per broadcast).
The denoising U-Net these come from traced 67 Transposes, now 3. Each case matches torch at batch 1 and 2 with odd
sizes drawn by hypothesis, eagerly and under XLA, and traces only the boundary's Transposes."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

pytest.importorskip("einops")

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, reduce


class StandardizedConv2d(nn.Conv2d):
    def forward(self, x):
        weight = self.weight
        mean = reduce(weight, 'o ... -> o 1 1 1', 'mean')
        var = reduce((weight - mean) ** 2, 'o ... -> o 1 1 1', 'mean')
        return F.conv2d(x, (weight - mean) * (var + 1e-5).rsqrt(), self.bias, self.stride, self.padding)


class OpModel(nn.Module):
    def __init__(self, heads=2, dim_head=3):
        super().__init__()
        self.heads = heads
        self.proj = StandardizedConv2d(3, 4, 3, padding=1)
        self.to_qkv = nn.Conv2d(4, heads * dim_head * 3, 1, bias=False)
        self.to_out = nn.Conv2d(heads * dim_head, 4, 1)

    def forward(self, x):
        x = self.proj(x)
        b, c, h, w = x.shape
        qkv = self.to_qkv(x).chunk(3, dim=1)
        q, k, v = map(lambda t: rearrange(t, 'b (h c) x y -> b h c (x y)', h=self.heads), qkv)
        {body}
        return self.to_out(out) + x
'''
BODIES = {
    "softmax_attention": "sim = torch.einsum('b h d i, b h d j -> b h i j', q, k)\n"
                         "        attn = sim.softmax(dim=-1)\n"
                         "        out = torch.einsum('b h i j, b h d j -> b h i d', attn, v)\n"
                         "        out = rearrange(out, 'b h (x y) d -> b (h d) x y', x=h, y=w)",
    "linear_attention": "q, k = q.softmax(dim=-2), k.softmax(dim=-1)\n"
                        "        context = torch.einsum('b h d n, b h e n -> b h d e', k, v)\n"
                        "        out = torch.einsum('b h d e, b h d n -> b h e n', context, q)\n"
                        "        out = rearrange(out, 'b h c (x y) -> b (h c) x y', h=self.heads, x=h, y=w)",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), SOURCE.replace("{body}", BODIES[name]),
                                    input_specs=("3,6,5",)))


@pytest.mark.parametrize("name", sorted(BODIES))
@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 2), height=st.integers(1, 7), width=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_image_attention_matches_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], tolerance=1e-4, what=f"{name} x{x.shape}")
    assert_same_outputs(ported(name), [x], tolerance=1e-4, what=f"{name} x{x.shape} (XLA)", jit=True)


@pytest.mark.parametrize("name", sorted(BODIES))
def test_image_attention_moves_no_data_but_at_the_boundary(ported, name):
    x = random_input(0, (2, 3, 6, 5))
    assert count_transposes(ported(name).keras_model, [x]) <= 2
