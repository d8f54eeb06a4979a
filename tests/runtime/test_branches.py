"""porter/runtime/branches.py's tensor_cond, the port of a data-dependent `if`: a condition known when traced (sizes
a trace fixes) runs only the branch it picks, so a guard that raises (torchaudio's Hybrid Demucs:
`if z.shape[-1] != length: raise ValueError(...)`) raises only where torch does, eagerly and under XLA; a condition
known only when run picks as torch's `if` does (tf.cond)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from porter.runtime.branches import tensor_cond


def _guarded(x, length):
    """The Hybrid Demucs guard as porter writes it, then a value computed after it."""
    import tensorflow as tf

    def then_branch():
        raise ValueError("Last index of z must be equal to length")

    def else_branch():
        return ()

    tensor_cond(tf.shape(x)[-1] != length if x.shape[-1] is None else x.shape[-1] != length, then_branch,
                else_branch)
    return x * 2.0


@given(rows=st.integers(1, 3), length=st.integers(1, 9), jit=st.booleans())
def test_a_size_guard_raises_only_when_its_sizes_disagree(rows, length, jit):
    import tensorflow as tf

    x = np.random.default_rng(length).standard_normal((rows, length)).astype("float32")
    run = tf.function(lambda t: _guarded(t, length), jit_compile=True) if jit else (lambda t: _guarded(t, length))
    np.testing.assert_array_equal(np.asarray(run(tf.constant(x))), x * 2.0)
    wrong = tf.function(lambda t: _guarded(t, length + 1), jit_compile=True) if jit else (
        lambda t: _guarded(t, length + 1))
    with pytest.raises(ValueError, match="Last index of z"):
        wrong(tf.constant(x))


@given(values=st.lists(st.floats(-4, 4, allow_nan=False, width=32), min_size=1, max_size=6),
       mode=st.sampled_from(["eager", "traced", "xla"]))
def test_a_value_condition_picks_the_branch_torch_takes(values, mode):
    import tensorflow as tf
    import torch

    x = np.asarray(values, dtype="float32")

    def ported(t):
        def then_branch(t=t):
            return (t * 2.0,)

        def else_branch(t=t):
            return (t - 1.0,)

        (t,) = tensor_cond(tf.reduce_sum(t) > 0, then_branch, else_branch)
        return t

    def source(t):
        if t.sum() > 0:
            t = t * 2.0
        else:
            t = t - 1.0
        return t

    run = ported if mode == "eager" else tf.function(ported, jit_compile=mode == "xla")
    expected = source(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(np.asarray(run(tf.constant(x))), expected, rtol=1e-6, atol=1e-6)


def test_a_python_condition_runs_one_branch():
    assert tensor_cond(True, lambda: "then", lambda: "else") == "then"
    assert tensor_cond(np.bool_(False), lambda: "then", lambda: "else") == "else"
    assert tensor_cond(np.array([True, False]), lambda: "then", lambda: "else") == "else"
