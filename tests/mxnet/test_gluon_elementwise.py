"""Property tests against real mxnet 1.9.1 (the worker of tests/mxnet/conftest.py) of the port's elementwise math
operators and F.take (porter/runtime/gluon_elementwise.py) on hypothesis-drawn shapes and values: exact halves for
round (mxnet rounds them away from zero), positive inputs where the op needs them, float64 as well as float32,
take's clip and wrap modes with indices out of range and float indices, on every axis."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.rules.gluon_elementwise import UNARY
from porter.runtime import gluon_elementwise as ops
from porter.verify.compare import assert_equivalent
from tests.mxnet.gluon_fixtures import needs_mxnet

pytestmark = needs_mxnet

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3)
POSITIVE = {"log", "sqrt", "rsqrt", "reciprocal"}


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(UNARY), shape=shapes, dtype=st.sampled_from(["float32", "float64"]),
       seed=st.integers(0, 2**16))
def test_elementwise_ops_match_mxnet(mxnet, name, shape, dtype, seed):
    generator = np.random.default_rng(seed)
    x = generator.standard_normal(shape) * 2
    if name == "round":
        x = np.round(x * 2) / 2  # exact halves among them
    if name in POSITIVE:
        x = np.abs(x) + 0.1
    if name == "log1p":
        x = np.abs(x) - 0.5
    x = x.astype(dtype)
    expected = mxnet.evaluate(f"nd.{name}(x)", {"x": x})
    actual = np.asarray(ops.gluon_unary(x, name))
    assert actual.dtype == expected.dtype
    assert_equivalent(expected, actual)


@settings(max_examples=25, deadline=None)
@given(shape=shapes, index_shape=st.lists(st.integers(1, 3), min_size=1, max_size=2), axis=st.integers(-1, 2),
       mode=st.sampled_from(["clip", "wrap"]), as_float=st.booleans(), seed=st.integers(0, 2**16))
def test_take_matches_mxnet(mxnet, shape, index_shape, axis, mode, as_float, seed):
    generator = np.random.default_rng(seed)
    axis = axis if axis < len(shape) else 0
    x = generator.standard_normal(shape).astype(np.float32)
    size = shape[axis]
    indices = generator.integers(-size - 1, 2 * size + 1, size=index_shape)
    if as_float:
        indices = np.where(indices >= 0, indices + 0.5, indices).astype(np.float32)  # truncated toward zero
    else:
        indices = indices.astype(np.int32)
    expected = mxnet.evaluate(f"nd.take(x, i, axis={axis}, mode={mode!r})", {"x": x, "i": indices})
    assert_equivalent(expected, np.asarray(ops.gluon_take(x, indices, axis=axis, mode=mode)))
