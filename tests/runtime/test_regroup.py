"""Runtime view_in_layout (porter/runtime/regroup.py): torch's view on a tensor stored in another axis order equals
torch's, for every storage order and result order, with and without a known batch; the layouts porter asks for
(channel split, channel shuffle, spatial merge) cost no Transpose."""

import numpy as np
import pytest
import tensorflow as tf
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.regroup import view_in_layout


@st.composite
def views(draw):
    """(torch shape, view sizes as the source writes them, storage order, result order)."""
    batch = draw(st.integers(1, 3))
    factors = draw(st.lists(st.lists(st.integers(1, 3), min_size=1, max_size=3), min_size=1, max_size=3))
    shape = [batch] + [f for group in factors for f in group]  # input dims: every factor its own dim
    merged = [batch] + [int(np.prod(group)) for group in factors]  # the view merges each group
    if draw(st.booleans()):
        shape, merged = merged, shape  # or splits
    sizes = list(merged)
    if draw(st.booleans()):
        sizes[draw(st.integers(0, len(sizes) - 1))] = -1
    order = draw(st.permutations(list(range(len(shape)))))
    out_order = draw(st.permutations(list(range(len(merged)))))
    return shape, sizes, list(order), list(out_order)


@settings(max_examples=60, deadline=None)
@given(case=views(), seed=st.integers(0, 2**16), dynamic_batch=st.booleans())
def test_view_in_layout_matches_torch(case, seed, dynamic_batch):
    shape, sizes, order, out_order = case
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    expected = torch.from_numpy(values).view(*sizes).permute(*out_order).numpy()
    stored = np.ascontiguousarray(np.transpose(values, order))
    if dynamic_batch and order[0] == 0:
        function = tf.function(lambda x: view_in_layout(x, order, out_order, *sizes),
                               input_signature=[tf.TensorSpec([None, *stored.shape[1:]], tf.float32)])
        got = function(tf.constant(stored)).numpy()
    else:
        got = view_in_layout(tf.constant(stored), order, out_order, *sizes).numpy()
    np.testing.assert_array_equal(got, expected)


def transposes(function, x):
    graph = tf.function(function).get_concrete_function(tf.TensorSpec([None, *x.shape[1:]], tf.float32)).graph
    return sum(op.type == "Transpose" for op in graph.get_operations())


@pytest.mark.parametrize("name, shape, order, out_order, sizes", [
    # (N, C, H, W) held channels-last, channels split into 2 groups: (N, 2, C/2, H, W) held as (N, H, W, 2, C/2)
    ("channel split", (2, 6, 5, 3), [0, 2, 3, 1], [0, 3, 4, 1, 2], (-1, 2, 3, 5, 3)),
    # the shuffle's view(b, -1, h, w) after transpose(1, 2): groups stored out of torch's order, result channels-last
    ("channel shuffle", (2, 2, 3, 5, 3), [0, 3, 4, 2, 1], [0, 2, 3, 1], (-1, 6, 5, 3)),
    # (N, C, H, W) -> (N, C, H*W) with the tensor channels-last: a reshape
    ("spatial merge", (2, 6, 5, 3), [0, 2, 3, 1], [0, 2, 1], (-1, 6, 15)),
])
def test_layouts_porter_asks_for_cost_no_transpose(name, shape, order, out_order, sizes):
    values = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    stored = np.ascontiguousarray(np.transpose(values, order))
    expected = torch.from_numpy(values).reshape(*sizes).permute(*out_order).numpy()
    np.testing.assert_array_equal(view_in_layout(tf.constant(stored), order, out_order, *sizes).numpy(), expected)
    assert transposes(lambda x: view_in_layout(x, order, out_order, *sizes), stored) == 0, name


@st.composite
def batch_views(draw):
    """(torch shape, view sizes, storage order, result order, whether the orders are the ones porter plans) for
    views that fold leading dims into the first (the time axis of a video net into the batch around a 2D stage) or
    unfold them, a dim behind them stored last like channels and kept whole; size-1 dims may be inserted, the
    channels then drawn anywhere (not planned: a transpose may be needed)."""
    lead = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    tail = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    shape, merged = lead + tail, [int(np.prod(lead))] + tail
    if draw(st.booleans()):
        shape, merged = merged, shape
    ones = draw(st.integers(0, 2))
    for _ in range(ones):
        merged.insert(draw(st.integers(1, len(merged))), 1)
    channel = len(shape) - len(tail) + draw(st.integers(0, len(tail) - 1))
    order = [d for d in range(len(shape)) if d != channel] + [channel]
    out_channel = len(merged) - len(shape) + channel if ones == 0 else draw(st.integers(1, len(merged) - 1))
    out_order = [d for d in range(len(merged)) if d != out_channel] + [out_channel]
    return shape, merged, order, out_order, ones == 0


@settings(max_examples=60, deadline=None)
@given(case=batch_views(), seed=st.integers(0, 2**16), dynamic=st.booleans(), infer=st.booleans())
def test_batch_folding_views_match_torch(case, seed, dynamic, infer):
    """Exact for every such view, whether the first size is known when traced or not (then the leading dims form
    one run of unknown size, its size given as -1 or computed from the input's); the planned ones cost no
    Transpose."""
    shape, merged, order, out_order, planned = case
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    expected = torch.from_numpy(values).view(*merged).permute(*out_order).numpy()
    stored = np.ascontiguousarray(np.transpose(values, order))
    folds = merged[0] % shape[0] == 0  # the first size is the input's times a factor (n * t), else a given size

    def view(x):
        first = -1 if infer else tf.shape(x)[0] * (merged[0] // shape[0]) if dynamic and folds else merged[0]
        return view_in_layout(x, order, out_order, first, *merged[1:])

    spec = [None, *stored.shape[1:]] if dynamic else list(stored.shape)
    function = tf.function(view, input_signature=[tf.TensorSpec(spec, tf.float32)])
    np.testing.assert_array_equal(function(tf.constant(stored)).numpy(), expected)
    if planned:
        graph = function.get_concrete_function().graph
        assert sum(op.type == "Transpose" for op in graph.get_operations()) == 0, case


@pytest.mark.parametrize("batch", [1, 3])
def test_a_batch_folded_into_the_channels_splits_out_in_one_transpose(batch):
    """StyleGAN2's modulated convolution: (B, C, H, W) viewed as (1, B*C, H, W) for a grouped convolution, then back
    to (B, C, H, W), both held channels-last: split where the dims lie and moved once (was a transpose, a reshape
    and a transpose: two), for a batch known when traced or only when run."""
    values = np.random.default_rng(batch).standard_normal((1, batch * 4, 5, 3)).astype(np.float32)
    stored = np.ascontiguousarray(np.transpose(values, [0, 2, 3, 1]))
    expected = torch.from_numpy(values).view(batch, 4, 5, 3).permute(0, 2, 3, 1).numpy()
    np.testing.assert_array_equal(
        view_in_layout(tf.constant(stored), [0, 2, 3, 1], [0, 2, 3, 1], batch, 4, 5, 3).numpy(), expected)
    graph = tf.function(lambda x: view_in_layout(x, [0, 2, 3, 1], [0, 2, 3, 1], tf.shape(x)[3] // 4, 4, 5, 3)) \
        .get_concrete_function(tf.TensorSpec([1, 5, 3, None], tf.float32)).graph
    assert sum(op.type == "Transpose" for op in graph.get_operations()) == 1
