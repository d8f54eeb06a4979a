"""Advanced indexing with several index tensors (porter/passes/expressions.py `advanced_subscript`, runtime
porter/runtime/advanced_index.py) against real torch: index tensors broadcast together, beside ints, slices and
`...`, adjacent or separated, negative indices; and a ported patch-dropout module (`x[batch_indices, keep]` with
`topk` indices, as vit-pytorch's PatchDropout) under XLA."""

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
    "separated": lambda i, j: (i, slice(None), j),
    "int_and_tensor": lambda i, j: (1, slice(None), j),
    "ellipsis_last": lambda i, j: (Ellipsis, j),
    "bounded_slice": lambda i, j: (i, slice(1, None), j),
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
