"""porter/runtime/tensor_ops.py `python_scalar`: `int(t)`, `float(t)`, `bool(t)` of a one-element tensor as torch
gives them. Eagerly the Python number itself; traced (tf.function, XLA) a scalar tensor of that kind: int64 for
`int` (truncated toward zero), bool for `bool`, float32 for `float`. `arange` of a traced `int(t)` is int64, as
torch's arange of an int is."""

import numpy as np
import pytest
import tensorflow as tf
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.tensor_ops import arange, python_scalar

VALUES = st.one_of(st.floats(-1e6, 1e6, width=32), st.sampled_from([0.0, -0.0, 0.5, -0.5, -2.7, 1e-30, 3.0]),
                   st.integers(-2**31, 2**31 - 1), st.booleans())
KINDS = {"int": int, "float": float, "bool": bool}
TRACED = {"int": tf.int64, "float": tf.float32, "bool": tf.bool}


def _tensors(value, shape):
    """The same one-element value in torch and TensorFlow (float32, int32 or bool, as drawn)."""
    dtype = "bool" if isinstance(value, bool) else "int32" if isinstance(value, int) else "float32"
    array = np.full(shape, value, dtype=dtype)
    return torch.from_numpy(array.copy()), tf.constant(array)


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=12, deadline=None)
@given(value=VALUES, shape=st.sampled_from([(), (1,), (1, 1)]))
def test_python_scalar_is_torchs(kind, value, shape):
    source, ported = _tensors(value, shape)
    expected = KINDS[kind](source)
    eager = python_scalar(ported, KINDS[kind])
    assert type(eager) is type(expected) and eager == expected
    for jit in (False, True):
        traced = tf.function(lambda t: python_scalar(t, KINDS[kind]), jit_compile=jit)(ported)
        assert traced.dtype == TRACED[kind] and traced.shape == ()
        assert traced.numpy() == (np.float32(expected) if kind == "float" else expected), (jit, traced)


@settings(max_examples=6, deadline=None)
@given(end=st.integers(0, 9), start=st.integers(-3, 0), step=st.integers(1, 3))
def test_arange_of_traced_int_is_int64(end, start, step):
    expected = torch.arange(start, int(torch.tensor(float(end) + 0.5)), step)
    for jit in (False, True):
        @tf.function(jit_compile=jit)
        def run(t):
            return arange(start, python_scalar(t, int), step)

        got = run(tf.constant([float(end) + 0.5]))
        assert got.dtype == tf.int64
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
