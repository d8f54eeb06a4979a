"""Runtime flatten_in_layout (porter/runtime/regroup.py): torch's `flatten(start, end)` of a tensor the port stores in
another axis order, its merged dims side by side in storage but in any order among themselves (a channel shuffle's
`permute(0, 2, 1, 3, 4).flatten(1, 2)` of an image held (N, H, W, G, C/G)). Drawn by hypothesis: ranks 2-5, sizes 1
and odd ones, batch 1, every storage order of the merged run and every place of it, eagerly and traced with sizes
unknown (the batch, or every size)."""

import numpy as np
import tensorflow as tf
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.regroup import flatten_in_layout


@st.composite
def stored_flattens(draw):
    """(torch shape, start, end, storage order: physical axis k holds torch dim order[k]) with dims start..end held
    side by side."""
    rank = draw(st.integers(2, 5))
    shape = draw(st.lists(st.sampled_from([1, 2, 3, 5]), min_size=rank, max_size=rank))
    start = draw(st.integers(0, rank - 2))
    end = draw(st.integers(start + 1, rank - 1))
    run = list(draw(st.permutations(list(range(start, end + 1)))))
    others = list(draw(st.permutations([d for d in range(rank) if not start <= d <= end])))
    place = draw(st.integers(0, len(others)))
    return shape, start, end, others[:place] + run + others[place:]


def expected_flatten(values, start, end, order):
    """torch's flatten, its result stored as the port holds it: the merged dim where the run was stored."""
    merged = torch.from_numpy(values).flatten(start, end).numpy()
    new_order = list(dict.fromkeys(d if d < start else start if d <= end else d - (end - start) for d in order))
    return np.transpose(merged, new_order)


@settings(max_examples=80, deadline=None)
@given(case=stored_flattens(), seed=st.integers(0, 2**16), traced=st.sampled_from(["eager", "batch", "all"]))
def test_flatten_in_layout_matches_torch(case, seed, traced):
    shape, start, end, order = case
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    stored = np.ascontiguousarray(np.transpose(values, order))
    positions = [order.index(d) for d in range(start, end + 1)]
    expected = expected_flatten(values, start, end, order)
    if traced == "eager":
        got = flatten_in_layout(tf.constant(stored), positions)
    else:
        spec = [None] * stored.ndim if traced == "all" else [None, *stored.shape[1:]]
        function = tf.function(lambda x: flatten_in_layout(x, positions),
                               input_signature=[tf.TensorSpec(spec, tf.float32)])
        got = function(tf.constant(stored))
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_a_shuffled_run_costs_a_gather_not_a_transpose():
    """(N, H, W, G, C/G) stored for torch's (N, C/G, G, H, W) after the shuffle's permute: flatten(1, 2) merges the
    last two axes where they lie and gathers the channels into torch's order."""
    function = tf.function(lambda x: flatten_in_layout(x, [4, 3]))
    graph = function.get_concrete_function(tf.TensorSpec([None, 5, 3, 2, 3], tf.float32)).graph
    kinds = [op.type for op in graph.get_operations()]
    assert "Transpose" not in kinds and "GatherV2" in kinds
