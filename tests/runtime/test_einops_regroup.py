"""Runtime einops rearrange (porter/runtime/einops.py) where each right group merges a run of adjacent left axes,
reordered inside the run (`b h w (g c) -> b h w (c g)`: a channel shuffle), which the runtime runs as a reshape and a
gather along each reordered group, not a transpose of the tensor. Drawn by hypothesis against real einops on torch:
names split from merged left axes (their lengths given as keywords), sizes 1 and odd ones, batch 1, runs of one to
three names in any order, eagerly, traced with the batch unknown, and compiled by XLA; any other regrouping drawn
alongside (a reorder across runs: the transpose path) must agree too."""

import itertools

import numpy as np
import pytest
import tensorflow as tf
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.einops import einops_rearrange

einops = pytest.importorskip("einops")


def _side(groups):
    return " ".join(group[0] if len(group) == 1 else f"({' '.join(group)})" for group in groups)


def _partition(draw, items):
    """`items` cut into consecutive non-empty groups."""
    cuts = sorted(draw(st.sets(st.integers(1, max(len(items) - 1, 1)), max_size=len(items) - 1))) \
        if len(items) > 1 else []
    bounds = [0, *cuts, len(items)]
    return [items[a:b] for a, b in itertools.pairwise(bounds) if b > a]


@st.composite
def regroupings(draw):
    """(input shape, pattern, axis lengths, whether every right group is a run reordered inside)."""
    count = draw(st.integers(2, 5))
    names = [f"a{i}" for i in range(count)]
    sizes = {name: draw(st.sampled_from([1, 2, 3, 5])) for name in names}
    sizes[names[0]] = draw(st.integers(1, 3))  # the batch
    left = [names[:1], *_partition(draw, names[1:])]
    within_runs = draw(st.booleans())
    if within_runs:
        right = [list(draw(st.permutations(run))) for run in _partition(draw, names)]
    else:
        right = _partition(draw, list(draw(st.permutations(names))))
    lengths = {}
    for group in left:  # einops infers one name of a merged axis; the others are given
        for name in group[1:]:
            lengths[name] = sizes[name]
    shape = [int(np.prod([sizes[n] for n in group])) for group in left]
    return shape, f"{_side(left)} -> {_side(right)}", lengths, within_runs


@settings(max_examples=80, deadline=None)
@given(case=regroupings(), seed=st.integers(0, 2**16), traced=st.sampled_from(["eager", "batch", "xla"]))
def test_rearrange_regrouping_matches_einops(case, seed, traced):
    shape, pattern, lengths, _ = case
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    expected = einops.rearrange(torch.from_numpy(values), pattern, **lengths).numpy()
    if traced == "eager":
        got = einops_rearrange(tf.constant(values), pattern, **lengths)
    else:
        spec = [None, *shape[1:]] if traced == "batch" else shape
        function = tf.function(lambda x: einops_rearrange(x, pattern, **lengths), jit_compile=traced == "xla",
                               input_signature=[tf.TensorSpec(spec, tf.float32)])
        got = function(tf.constant(values))
    np.testing.assert_array_equal(np.asarray(got), expected, err_msg=f"{pattern} {lengths} on {shape}")


@settings(max_examples=30, deadline=None)
@given(case=regroupings().filter(lambda case: case[3]))
def test_a_regrouping_inside_runs_traces_no_transpose(case):
    shape, pattern, lengths, _ = case
    function = tf.function(lambda x: einops_rearrange(x, pattern, **lengths))
    graph = function.get_concrete_function(tf.TensorSpec(shape, tf.float32)).graph
    assert "Transpose" not in [op.type for op in graph.get_operations()], pattern
