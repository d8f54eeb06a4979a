"""EfficientViT-MSRA's cascaded group attention on a channels-last image: `feat.view(B, -1, H, W)` of a conv's
output (its channels inferred, its spatial sizes read off the block's input) keeps the image channels-last, its
`split(..., dim=1)` cuts the channels where they lie, and `q.transpose(-2, -1) @ k` of the flattened maps is one
einsum over them as stored (the `@` operator decides as `torch.matmul`'s rule does); `attn_bias[head_idx]` of
the count `enumerate` hands the loop drops a dim, so the scores keep their rank and `v @ attn.transpose(-2, -1)` is
an einsum too. timm's EfficientViT-MSRA traced 29 Transposes before, 3 now. The port matches torch eagerly and under XLA for odd sizes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port

SOURCE = '''
import torch
import torch.nn as nn


class GroupAttention(nn.Module):
    def __init__(self, dim=8, key_dim=2, heads=2):
        super().__init__()
        self.key_dim, self.val_dim, self.heads = key_dim, dim // heads, heads
        self.scale = key_dim ** -0.5
        self.qkvs = nn.ModuleList([nn.Conv2d(dim // heads, 2 * key_dim + dim // heads, 1) for _ in range(heads)])
        self.dws = nn.ModuleList([nn.Conv2d(key_dim, key_dim, 3, padding=1, groups=key_dim) for _ in range(heads)])
        self.proj = nn.Conv2d(dim, dim, 1)
        self.attention_biases = nn.Parameter(torch.randn(heads, 1, 1))

    def forward(self, x):
        B, C, H, W = x.shape
        feats_in = x.chunk(len(self.qkvs), dim=1)
        feats_out = []
        feat = feats_in[0]
        attn_bias = self.attention_biases
        for head_idx, (qkv, dws) in enumerate(zip(self.qkvs, self.dws)):
            if head_idx > 0:
                feat = feat + feats_in[head_idx]
            feat = qkv(feat)
            q, k, v = feat.view(B, -1, H, W).split([self.key_dim, self.key_dim, self.val_dim], dim=1)
            q = dws(q)
            q, k, v = q.flatten(2), k.flatten(2), v.flatten(2)
            q = q * self.scale
            attn = q.transpose(-2, -1) @ k
            attn = (attn + attn_bias[head_idx]).softmax(dim=-1)
            feat = (v @ attn.transpose(-2, -1)).view(B, self.val_dim, H, W)
            feats_out.append(feat)
        return self.proj(torch.cat(feats_out, 1))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("group_attention"), SOURCE, input_specs=("8,5,7",))


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([3, 5]), width=st.sampled_from([4, 7]),
       seed=st.integers(0, 2**16))
def test_cascaded_group_attention_matches_torch(pair, batch, height, width, seed):
    x = np.random.default_rng(seed).standard_normal((batch, 8, height, width)).astype(np.float32)
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)


def test_the_view_keeps_the_image_channels_last(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "view_in_layout(feat, [0, 2, 3, 1], [0, 2, 3, 1]" in code and code.count("tf.einsum(") == 2, code
    x = np.random.default_rng(0).standard_normal((2, 8, 5, 7)).astype(np.float32)
    assert count_transposes(pair.keras_model, [x]) <= 6
