"""Property tests against real mxnet 1.9.1 (the worker of tests/mxnet/conftest.py) of the port's sequence
operators (porter/runtime/gluon_sequence_ops.py) on hypothesis-drawn shapes and values: contrib.arange_like
(start/step/repeat, an axis or the whole shape, int32 data), broadcast_like (whole or by axes), broadcast_axis, the
broadcast comparisons (dtype kept), cast, the Embedding operator (float ids, ids out of range), gather_nd,
reshape_like (spans with negative bounds), shape_array, stack, and broadcast_div of integers."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.rules.gluon_sequence_ops import COMPARISONS
from porter.runtime import gluon_sequence_ops as ops
from porter.verify.compare import assert_equivalent
from tests.mxnet.gluon_fixtures import needs_mxnet

pytestmark = needs_mxnet

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3)
seeds = st.integers(0, 2**16)


def _same(expected, actual):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, (actual.shape, expected.shape,
                                                                               actual.dtype, expected.dtype)
    assert_equivalent(expected, actual)


@settings(max_examples=20, deadline=None)
@given(shape=shapes, start=st.sampled_from([0.0, 1.0, -2.5]), step=st.sampled_from([1.0, 2.0, 0.5]),
       repeat=st.integers(1, 3), axis=st.integers(-1, 2), integer=st.booleans())
def test_arange_like_matches_mxnet(mxnet, shape, start, step, repeat, axis, integer):
    x = np.zeros(shape, np.int32 if integer else np.float32)
    axis = None if axis >= len(shape) else axis
    expected = mxnet.evaluate(f"nd.contrib.arange_like(x, start={start}, step={step}, repeat={repeat}, "
                              f"axis={axis})", {"x": x})
    _same(expected, ops.gluon_arange_like(x, start=start, step=step, repeat=repeat, axis=axis))


@settings(max_examples=20, deadline=None)
@given(shape=shapes, ones=st.lists(st.booleans(), min_size=3, max_size=3), by_axes=st.booleans(), seed=seeds)
def test_broadcast_like_and_axis_match_mxnet(mxnet, shape, ones, by_axes, seed):
    generator = np.random.default_rng(seed)
    small = [1 if one else size for one, size in zip(ones, shape)]
    x = generator.standard_normal(small).astype(np.float32)
    like = generator.standard_normal(shape).astype(np.float32)
    axes = tuple(i for i, one in enumerate(ones[:len(shape)]) if one)
    if by_axes and axes:
        call = f"lhs_axes={axes}, rhs_axes={axes}"
        expected = mxnet.evaluate(f"nd.broadcast_like(x, y, {call})", {"x": x, "y": like})
        _same(expected, ops.gluon_broadcast_like(x, like, lhs_axes=axes, rhs_axes=axes))
    else:
        _same(mxnet.evaluate("nd.broadcast_like(x, y)", {"x": x, "y": like}), ops.gluon_broadcast_like(x, like))
    if axes:
        sizes = tuple(shape[a] for a in axes)
        expected = mxnet.evaluate(f"nd.broadcast_axis(x, axis={axes}, size={sizes})", {"x": x})
        _same(expected, ops.gluon_broadcast_axis(x, axis=axes, size=sizes))


@settings(max_examples=20, deadline=None)
@given(shape=shapes, name=st.sampled_from(sorted(COMPARISONS)), rows=st.booleans(),
       dtype=st.sampled_from(["float32", "int32"]), seed=seeds)
def test_broadcast_comparisons_match_mxnet(mxnet, shape, name, rows, dtype, seed):
    generator = np.random.default_rng(seed)
    lhs = generator.integers(-2, 3, size=shape).astype(dtype)
    rhs = generator.integers(-2, 3, size=[1] * (len(shape) - 1) + [shape[-1]] if rows else shape).astype(dtype)
    expected = mxnet.evaluate(f"nd.broadcast_{name}(a, b)", {"a": lhs, "b": rhs})
    _same(expected, ops.gluon_broadcast_compare(lhs, rhs, COMPARISONS[name]))


@settings(max_examples=15, deadline=None)
@given(shape=shapes, dtype=st.sampled_from(["int32", "float64", "int64", "float16"]), seed=seeds)
def test_cast_matches_mxnet(mxnet, shape, dtype, seed):
    x = (np.random.default_rng(seed).standard_normal(shape) * 4).astype(np.float32)
    _same(mxnet.evaluate(f"nd.cast(x, dtype={dtype!r})", {"x": x}), ops.gluon_cast(x, dtype))
    _same(mxnet.evaluate(f"x.astype({dtype!r})", {"x": x}), ops.gluon_cast(x, dtype))


@settings(max_examples=20, deadline=None)
@given(shape=shapes, rows=st.integers(1, 6), width=st.integers(1, 4), as_float=st.booleans(), seed=seeds)
def test_embedding_operator_matches_mxnet(mxnet, shape, rows, width, as_float, seed):
    generator = np.random.default_rng(seed)
    weight = generator.standard_normal((rows, width)).astype(np.float32)
    ids = generator.integers(-2, rows + 2, size=shape)  # some out of range: clipped, as in mxnet
    ids = (ids + 0.5 * (ids >= 0)).astype(np.float32) if as_float else ids.astype(np.int32)
    expected = mxnet.evaluate(f"nd.Embedding(i, w, {rows}, {width})", {"i": ids, "w": weight})
    _same(expected, ops.gluon_embedding_lookup(ids, weight, rows, width))


@settings(max_examples=20, deadline=None)
@given(shape=shapes, depth=st.integers(1, 3), picked=st.lists(st.integers(1, 3), min_size=1, max_size=2),
       seed=seeds)
def test_gather_nd_matches_mxnet(mxnet, shape, depth, picked, seed):
    generator = np.random.default_rng(seed)
    depth = min(depth, len(shape))
    x = generator.standard_normal(shape).astype(np.float32)
    indices = np.stack([generator.integers(0, shape[axis], size=picked) for axis in range(depth)])
    indices = indices.astype(np.float32)  # GluonNLP's index rows are float (arange_like of float data)
    _same(mxnet.evaluate("nd.gather_nd(x, i)", {"x": x, "i": indices}), ops.gluon_gather_nd(x, indices))


@settings(max_examples=20, deadline=None)
@given(batch=st.integers(1, 3), count=st.integers(1, 3), width=st.integers(1, 3), seed=seeds)
def test_reshape_like_matches_mxnet(mxnet, batch, count, width, seed):
    """BERT's masked-LM decode: (batch * count, width) regrouped as the (batch, count) positions' first axes."""
    generator = np.random.default_rng(seed)
    x = generator.standard_normal((batch * count, width)).astype(np.float32)
    like = np.zeros((batch, count), np.int32)
    expected = mxnet.evaluate("x.reshape_like(y, lhs_begin=-2, lhs_end=-1, rhs_begin=0)", {"x": x, "y": like})
    _same(expected, ops.gluon_reshape_like(x, like, lhs_begin=-2, lhs_end=-1, rhs_begin=0))
    flat = x.reshape(-1)
    grid = np.zeros((width, batch * count), np.float32)
    _same(mxnet.evaluate("nd.reshape_like(x, y)", {"x": flat, "y": grid}), ops.gluon_reshape_like(flat, grid))


@settings(max_examples=10, deadline=None)
@given(shape=shapes, count=st.integers(1, 3), axis=st.integers(-1, 3), seed=seeds)
def test_shape_array_and_stack_match_mxnet(mxnet, shape, count, axis, seed):
    generator = np.random.default_rng(seed)
    arrays = {f"a{i}": generator.standard_normal(shape).astype(np.float32) for i in range(count)}
    axis = min(axis, len(shape))
    _same(mxnet.evaluate("nd.shape_array(a0)", arrays), ops.gluon_shape_array(arrays["a0"]))
    expected = mxnet.evaluate(f"nd.stack({', '.join(arrays)}, axis={axis})", arrays)
    _same(expected, ops.gluon_stack(*arrays.values(), axis=axis))


@settings(max_examples=15, deadline=None)
@given(shape=shapes, dtype=st.sampled_from(["int32", "int64", "float32"]), seed=seeds)
def test_broadcast_div_of_integers_matches_mxnet(mxnet, shape, dtype, seed):
    """BERT's masked-LM batch index, `broadcast_div(arange_like(int32), count)`: integer operands divide to an
    integer quotient in their dtype (negative ones included), floats as usual."""
    from porter.runtime.gluon_math_ops import gluon_broadcast_div

    generator = np.random.default_rng(seed)
    lhs = generator.integers(-9, 10, size=shape).astype(dtype)
    rhs = generator.choice([-3, -2, 1, 2, 4], size=shape[-1:]).astype(dtype)
    _same(mxnet.evaluate("nd.broadcast_div(a, b)", {"a": lhs, "b": rhs}), gluon_broadcast_div(lhs, rhs))
