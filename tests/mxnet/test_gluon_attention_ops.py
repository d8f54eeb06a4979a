"""Property tests against real mxnet 1.9.1 (the worker of tests/mxnet/conftest.py) of the port's attention
operators (porter/runtime/gluon_attention_ops.py) on hypothesis-drawn sizes and values: BERT's fused
interleaved_matmul_selfatt_qk / _valatt (heads, head_dim, batch 1 and sequence 1 included), div_sqrt_dim,
softmax / log_softmax with `temperature` and `dtype`, and softmax with `length` + `use_length` (lengths of 0 and
of the full row)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.gluon_attention_ops import (
    gluon_div_sqrt_dim,
    gluon_interleaved_matmul_selfatt_qk,
    gluon_interleaved_matmul_selfatt_valatt,
    gluon_log_softmax,
    gluon_softmax,
)
from porter.verify.compare import assert_equivalent
from tests.mxnet.gluon_fixtures import needs_mxnet

pytestmark = needs_mxnet


@settings(max_examples=20, deadline=None)
@given(steps=st.integers(1, 5), batch=st.integers(1, 3), heads=st.integers(1, 3), head_dim=st.integers(1, 5),
       seed=st.integers(0, 2**16))
def test_interleaved_self_attention_matches_mxnet(mxnet, steps, batch, heads, head_dim, seed):
    generator = np.random.default_rng(seed)
    qkv = generator.standard_normal((steps, batch, heads * 3 * head_dim)).astype(np.float32)
    attention = generator.random((batch * heads, steps, steps)).astype(np.float32)
    scores = mxnet.evaluate(f"nd.contrib.interleaved_matmul_selfatt_qk(x, heads={heads})", {"x": qkv})
    context = mxnet.evaluate(f"nd.contrib.interleaved_matmul_selfatt_valatt(x, a, heads={heads})",
                             {"x": qkv, "a": attention})
    assert_equivalent(scores, np.asarray(gluon_interleaved_matmul_selfatt_qk(qkv, heads=heads)))
    assert_equivalent(context, np.asarray(gluon_interleaved_matmul_selfatt_valatt(qkv, attention, heads=heads)))


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), seed=st.integers(0, 2**16))
def test_div_sqrt_dim_matches_mxnet(mxnet, shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    assert_equivalent(mxnet.evaluate("nd.contrib.div_sqrt_dim(x)", {"x": x}), np.asarray(gluon_div_sqrt_dim(x)))


@pytest.mark.parametrize("name, function", [("softmax", gluon_softmax), ("log_softmax", gluon_log_softmax)])
@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), axis_pick=st.integers(0, 2),
       temperature=st.sampled_from([None, 0.5, 3.0]), dtype=st.sampled_from([None, "float64"]),
       seed=st.integers(0, 2**16))
def test_softmax_extra_arguments_match_mxnet(mxnet, name, function, shape, axis_pick, temperature, dtype, seed):
    generator = np.random.default_rng(seed)
    x = (generator.standard_normal(shape) * 3).astype(np.float32)
    axis = -1 if axis_pick == 2 else axis_pick % len(shape)
    extra = (f", temperature={temperature}" if temperature is not None else "") + \
        (f", dtype={dtype!r}" if dtype is not None else "")
    expected = mxnet.evaluate(f"nd.{name}(x, axis={axis}{extra})", {"x": x})
    actual = np.asarray(function(x, axis=axis, temperature=temperature, dtype=dtype))
    assert actual.dtype == expected.dtype
    assert_equivalent(expected, actual)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=2, max_size=3), last=st.booleans(), seed=st.integers(0, 2**16))
def test_softmax_with_lengths_matches_mxnet(mxnet, shape, last, seed):
    """`use_length=True`: positions at or past each row's length (0 included) come out 0; the length tensor
    has data's shape without `axis`, int32 as GluonNLP passes it."""
    generator = np.random.default_rng(seed)
    x = (generator.standard_normal(shape) * 3).astype(np.float32)
    axis = len(shape) - 1 if last else 0
    length = generator.integers(0, shape[axis] + 1, size=shape[:axis] + shape[axis + 1:]).astype(np.int32)
    expected = mxnet.evaluate(f"nd.softmax(x, length=n, axis={axis}, use_length=True)", {"x": x, "n": length})
    actual = np.asarray(gluon_softmax(x, length, axis=axis, use_length=True))
    assert_equivalent(expected, actual)
