"""Advanced indexing with several index tensors (porter/passes/expressions.py `advanced_subscript`, runtime
porter/runtime/advanced_index.py) against real torch: index tensors broadcast together, beside ints, slices and
`...`, adjacent or separated, negative indices; one index tensor on one axis (a gather along it, no Transpose:
LeViT's `attention_biases[:, attention_bias_idxs]`); and a ported patch-dropout module (`x[batch_indices, keep]` with
`topk` indices, as vit-pytorch's PatchDropout) under XLA; DLRM's dot interaction `Z[:, li, lj]` (index tensors
after full slices: a gather of full coordinates, no Transpose); and LeViT's attention, its biases gathered from a buffer
built by `torch.empty((N, N))`, tracing no Transpose."""

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

# (index builder from (torch-or-numpy int arrays i, j), description): i indexes dim 0 (size 3), j dim 1 (size 4)
PATTERNS = {
    "leading_pair": lambda i, j: (i[:, None], j),
    "pair_then_slice": lambda i, j: (i, j, slice(None)),
    "slice_then_pair": lambda i, j: (slice(None), i, j),
    "two_slices_then_pair": lambda i, j: (slice(None), slice(None), i[:, None] % 4, j),  # (a batch of gathers)
    "slice_then_broadcast_pair_then_slice": lambda i, j: (slice(None), (i % 4)[:, None], j, slice(None)),
    "separated": lambda i, j: (i, slice(None), j),
    "int_and_tensor": lambda i, j: (1, slice(None), j),
    "ellipsis_last": lambda i, j: (Ellipsis, j),
    "bounded_slice": lambda i, j: (i, slice(1, None), j),
    "one_index_second_axis": lambda i, j: (slice(None), j),
    "one_index_after_ellipsis": lambda i, j: (Ellipsis, j[:, None], slice(None)),
    "one_index_after_int": lambda i, j: (2, j),
}


def _index(pattern, i, j):
    return PATTERNS[pattern](i, j)


@settings(max_examples=40, deadline=None)
@given(pattern=st.sampled_from(sorted(PATTERNS)), count=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_advanced_index_matches_torch(pattern, count, seed):
    import torch

    from porter.runtime.advanced_index import advanced_index

    rng = np.random.default_rng(seed)
    x = random_input(seed, (3, 4, 4, 4))
    i = rng.integers(-3, 3, size=count)
    j = rng.integers(-4, 4, size=count)
    want = torch.from_numpy(x)[_index(pattern, torch.from_numpy(i), torch.from_numpy(j))].numpy()
    got = advanced_index(x, _index(pattern, i if pattern != "int_and_tensor" else i, j)).numpy()
    np.testing.assert_array_equal(got, want)


PATCH_DROPOUT = '''
import torch
from torch import nn
from einops import rearrange


class KeepPatches(nn.Module):
    def __init__(self, keep=3):
        super().__init__()
        self.keep = keep
        self.score = nn.Linear(4, 1)

    def forward(self, x):
        b, n, _ = x.shape
        batch_indices = rearrange(torch.arange(b), '... -> ... 1')
        keep = self.score(x).squeeze(-1).topk(self.keep, dim=-1).indices
        return x[batch_indices, keep] * 2.0
'''


@pytest.fixture(scope="module")
def keep_patches(tmp_path_factory):
    return port(tmp_path_factory.mktemp("advanced_index"), textwrap.dedent(PATCH_DROPOUT), input_specs=("6,4",))


@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_ported_patch_selection_matches_torch(keep_patches, batch, seed):
    x = random_input(seed, (batch, 6, 4))
    assert_same_outputs(keep_patches, [x], tolerance=1e-6, what="x[batch, keep]")
    assert_same_outputs(keep_patches, [x], tolerance=1e-6, what="x[batch, keep] XLA", jit=True)


@settings(max_examples=10, deadline=None)
@given(axis=st.integers(0, 2), index_rank=st.integers(0, 2), seed=st.integers(0, 2**16))
def test_one_index_tensor_gathers_along_its_axis_without_transpose(axis, index_rank, seed):
    import tensorflow as tf
    import torch

    from porter.runtime.advanced_index import advanced_index

    rng = np.random.default_rng(seed)
    x = random_input(seed, (3, 5, 4))
    size = x.shape[axis]
    index = rng.integers(-size, size, size=(2, 3)[:index_rank])
    key = (slice(None),) * axis + (index,)
    want = torch.from_numpy(x)[key[:axis] + (torch.from_numpy(np.asarray(index)),)].numpy()
    np.testing.assert_array_equal(advanced_index(x, key).numpy(), want)
    graph = tf.function(lambda t: advanced_index(t, key)).get_concrete_function(
        tf.TensorSpec(x.shape, tf.float32)).graph
    assert not [op for op in graph.get_operations() if op.type == "Transpose"]


LEVIT_ATTENTION = '''
import torch
import torch.nn as nn


class Attn(nn.Module):
    def __init__(self, dim=16, heads=2, key_dim=4, N=9):
        super().__init__()
        self.num_heads, self.key_dim = heads, key_dim
        self.scale = key_dim ** -0.5
        self.qkv = nn.Linear(dim, heads * key_dim * 3)
        self.proj = nn.Linear(heads * key_dim, dim)
        self.attention_biases = nn.Parameter(torch.randn(heads, N))
        self.register_buffer('attention_bias_idxs', torch.empty((N, N), dtype=torch.long), persistent=False)
        self.attention_bias_idxs.copy_((torch.arange(N)[:, None] - torch.arange(N)[None, :]).abs())

    def get_attention_biases(self):
        return self.attention_biases[:, self.attention_bias_idxs]

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).view(B, N, self.num_heads, -1).split([self.key_dim] * 3, dim=3)
        q = q.permute(0, 2, 1, 3)
        k = k.permute(0, 2, 3, 1)
        v = v.permute(0, 2, 1, 3)
        attn = q @ k * self.scale + self.get_attention_biases()
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, -1)
        return self.proj(x)
'''


@pytest.fixture(scope="module")
def levit_attention(tmp_path_factory):
    return port(tmp_path_factory.mktemp("levit_attention"), textwrap.dedent(LEVIT_ATTENTION), input_specs=("9,16",))


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_attention_with_gathered_biases_matches_torch_without_transposes(levit_attention, batch, seed):
    from porter.verify.harness import count_transposes

    x = random_input(seed, (batch, 9, 16))
    assert_same_outputs(levit_attention, [x], tolerance=1e-5)
    assert_same_outputs(levit_attention, [x], tolerance=1e-5, jit=True)
    assert count_transposes(levit_attention.keras_model, [x]) == 0


DLRM_INTERACTION = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, n=4, d=6):
        super().__init__()
        self.bot = nn.Linear(d, d)
        self.embeddings = nn.ModuleList([nn.Embedding(10, d) for _ in range(n - 1)])
        self.register_buffer("li", torch.tensor([i for i in range(n) for j in range(i)]))
        self.register_buffer("lj", torch.tensor([j for i in range(n) for j in range(i)]))

    def forward(self, dense):
        x = self.bot(dense)
        ly = [emb(torch.full((x.shape[0],), k + 1, dtype=torch.long)) for k, emb in enumerate(self.embeddings)]
        (batch_size, d) = x.shape
        T = torch.cat([x] + ly, dim=1).view((batch_size, -1, d))
        Z = torch.bmm(T, torch.transpose(T, 1, 2))
        Zflat = Z[:, self.li, self.lj]
        return torch.cat([x] + [Zflat], dim=1)
'''


@pytest.fixture(scope="module")
def dlrm(tmp_path_factory):
    return port(tmp_path_factory.mktemp("dlrm"), textwrap.dedent(DLRM_INTERACTION), input_specs=("6",))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3))
def test_dlrm_interaction_matches_torch_without_transposes(dlrm, seed, batch):
    from tests.corpus.test_torchvision import xla_transposes

    x = random_input(seed, (batch, 6))
    assert_same_outputs(dlrm, [x])
    assert xla_transposes(dlrm.keras_model, x) == 1  # (torch's own `transpose(T, 1, 2)` of the bmm)
