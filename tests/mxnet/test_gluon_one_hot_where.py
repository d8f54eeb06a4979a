"""Property tests against real mxnet 1.9.1 (the long-lived worker of tests/mxnet/conftest.py) of the port's
F.one_hot and F.where (porter/runtime/gluon_math_ops.py) on hypothesis-drawn shapes, depths, values and dtypes:
indices outside [0, depth) included, float token ids, a rank-1 condition picking rows, batch 1."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.gluon_math_ops import gluon_one_hot, gluon_where
from porter.verify.compare import assert_equivalent
from tests.mxnet.gluon_fixtures import needs_mxnet

pytestmark = needs_mxnet

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3)


@settings(max_examples=25, deadline=None)
@given(shape=shapes, depth=st.integers(1, 7), on=st.sampled_from([1.0, 2.5, -3.0]),
       off=st.sampled_from([0.0, -1.0, 0.25]), dtype=st.sampled_from(["float32", "float64", "int32"]),
       as_float=st.booleans(), seed=st.integers(0, 2**16))
def test_one_hot_matches_mxnet(mxnet, shape, depth, on, off, dtype, as_float, seed):
    indices = np.random.default_rng(seed).integers(-2, depth + 2, size=shape)  # some outside [0, depth)
    indices = indices.astype(np.float32 if as_float else np.int32)
    expected = mxnet.evaluate(f"nd.one_hot(i, {depth}, on_value={on}, off_value={off}, dtype={dtype!r})",
                              {"i": indices})
    actual = np.asarray(gluon_one_hot(indices, depth, on_value=on, off_value=off, dtype=dtype))
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    assert_equivalent(expected, actual)


@settings(max_examples=25, deadline=None)
@given(shape=shapes, rows=st.booleans(), seed=st.integers(0, 2**16))
def test_where_matches_mxnet(mxnet, shape, rows, seed):
    generator = np.random.default_rng(seed)
    x = generator.standard_normal(shape).astype(np.float32)
    y = generator.standard_normal(shape).astype(np.float32)
    # a number condition (mxnet has no booleans): zeros and non-zeros, the full shape or one value per row
    condition = generator.integers(-1, 2, size=shape[:1] if rows else shape).astype(np.float32)
    expected = mxnet.evaluate("nd.where(c, x, y)", {"c": condition, "x": x, "y": y})
    actual = np.asarray(gluon_where(condition, x, y))
    assert actual.shape == expected.shape
    assert_equivalent(expected, actual)
