"""Property tests against real mxnet 1.9.1 (one long-lived mxnet process, tests/mxnet/mxnet_worker.py) of the
Gluon mappings custom-parameter models use: NDArray creation (zeros, ones, full, array, arange), F.FullyConnected (flatten, no_bias, batch 1, awkward sizes),
F.slice_axis, F.dot with a matrix, F.SequenceMask, the full reductions' shape (1,), the initializers mx.init.Xavier/Normal/Uniform (ranges and spread)
and the value of a Block's own parameter."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from porter.runtime.gluon_layers import GluonNormal, GluonUniform, GluonXavier, gluon_parameter_value
from porter.runtime.gluon_math_ops import gluon_fully_connected
from porter.runtime.gluon_ops import gluon_full_reduction
from porter.runtime.gluon_shape_ops import gluon_slice_axis
from porter.verify.compare import assert_equivalent
from tests.mxnet.gluon_fixtures import needs_mxnet

pytestmark = needs_mxnet


def _normal(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


@given(batch=st.integers(1, 3), extra=st.lists(st.integers(1, 4), max_size=2), units=st.integers(1, 7),
       hidden=st.integers(1, 9), flatten=st.booleans(), no_bias=st.booleans(), seed=st.integers(0, 2**16))
def test_fully_connected_matches_mxnet(mxnet, batch, extra, units, hidden, flatten, no_bias, seed):
    rng = np.random.default_rng(seed)
    x = _normal(rng, (batch, *extra, units))
    in_units = int(np.prod(x.shape[1:])) if flatten else units
    arrays = {"x": x, "w": _normal(rng, (hidden, in_units)), "b": _normal(rng, (hidden,))}
    bias = "None" if no_bias else "b"
    expected = mxnet.evaluate(f"nd.FullyConnected(x, w, {bias}, num_hidden={hidden}, flatten={flatten}, "
                              f"no_bias={no_bias})", arrays)
    actual = gluon_fully_connected(x, arrays["w"], None if no_bias else arrays["b"], num_hidden=hidden,
                                   flatten=flatten, no_bias=no_bias)
    assert tuple(actual.shape) == expected.shape
    assert_equivalent(expected, np.asarray(actual))


@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4), data=st.data(), seed=st.integers(0, 2**16))
def test_slice_axis_matches_mxnet(mxnet, shape, data, seed):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = shape[axis]
    begin = data.draw(st.integers(-size, size - 1))
    first = begin % size
    end = data.draw(st.one_of(st.none(), st.integers(first + 1, size), st.integers(first + 1 - size, 0).filter(
        lambda e: e < 0)))
    x = _normal(np.random.default_rng(seed), shape)
    expected = mxnet.evaluate(f"nd.slice_axis(x, axis={axis}, begin={begin}, end={end})", {"x": x})
    assert_equivalent(expected, np.asarray(gluon_slice_axis(x, axis=axis, begin=begin, end=end)))


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), op=st.sampled_from(["sum", "mean", "max", "min"]),
       seed=st.integers(0, 2**16))
def test_full_reductions_keep_one_axis_as_mxnet(mxnet, shape, op, seed):
    import tensorflow as tf

    x = _normal(np.random.default_rng(seed), shape)
    expected = mxnet.evaluate(f"nd.{op}(x)", {"x": x})
    reduced = {"sum": tf.reduce_sum, "mean": tf.reduce_mean, "max": tf.reduce_max, "min": tf.reduce_min}[op](x)
    actual = gluon_full_reduction(reduced)
    assert tuple(actual.shape) == expected.shape == (1,)
    assert_equivalent(expected, np.asarray(actual))


INITIALIZERS = {  # mxnet expression -> the port's initializer
    "mx.init.Xavier()": GluonXavier(),
    "mx.init.Xavier(factor_type='in', magnitude=2)": GluonXavier(factor_type="in", magnitude=2),
    "mx.init.Xavier(rnd_type='gaussian', factor_type='out')": GluonXavier(rnd_type="gaussian", factor_type="out"),
    "mx.init.Normal(0.3)": GluonNormal(0.3),
    "mx.init.Uniform(0.2)": GluonUniform(0.2),
}


@pytest.mark.parametrize("shape", [(300, 200), (64, 16, 3, 3), (1, 2000)])
@pytest.mark.parametrize("expression", sorted(INITIALIZERS))
def test_initializers_draw_like_mxnet(mxnet, expression, shape):
    """Same bounds (uniform) and spread: a parameter drawn by mxnet and by the port from the same initializer."""
    setup = [f"p = mx.gluon.Parameter('p', shape={shape}, init={expression})", "p.initialize()"]
    expected = mxnet.evaluate("p.data()", {}, setup=setup)
    actual = gluon_parameter_value(shape, init=INITIALIZERS[expression])
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    # two independent samples' spreads: each off by about 1/sqrt(2n) of itself; 5 such errors of their difference
    # (a (1, 2000) draw differed by 5.2% once: a 5% bound failed 2% of runs)
    tolerance = max(0.05, 5 * np.sqrt(2 / (2 * actual.size)))
    assert abs(actual.std() - expected.std()) <= tolerance * expected.std()
    if "gaussian" not in expression and "Normal" not in expression:
        bound = np.abs(expected).max()
        assert np.abs(actual).max() <= bound * 1.01 and np.abs(actual).max() >= bound * 0.95


@pytest.mark.parametrize("init", ["'zeros'", "'ones'", "mx.init.Zero()", "mx.init.One()", "mx.init.Constant(0.25)",
                                  "None"])
def test_parameter_value_from_named_and_constant_initializers(mxnet, init):
    from porter.runtime.gluon_activations import GluonConstant
    from porter.runtime.gluon_layers import GluonOne, GluonZero

    setup = [f"p = mx.gluon.Parameter('p', shape=(3, 2), init={init})", "p.initialize()"]
    expected = mxnet.evaluate("p.data()", {}, setup=setup)
    port_init = {"'zeros'": "zeros", "'ones'": "ones", "mx.init.Zero()": GluonZero(), "mx.init.One()": GluonOne(),
                 "mx.init.Constant(0.25)": GluonConstant(0.25), "None": None}[init]
    actual = gluon_parameter_value((3, 2), init=port_init)
    if init == "None":  # mxnet's default Uniform(0.07)
        assert np.abs(actual).max() <= 0.07 and np.abs(expected).max() <= 0.07
    else:
        np.testing.assert_array_equal(actual, expected)


def test_parameter_sizes_left_open_are_refused_clearly():
    with pytest.raises(NotImplementedError, match="sizes left open"):
        gluon_parameter_value((0, 4))


@given(lead=st.lists(st.integers(1, 4), min_size=1, max_size=3), k=st.integers(1, 6), m=st.integers(1, 5),
       transpose_a=st.booleans(), transpose_b=st.booleans(), seed=st.integers(0, 2**16))
def test_dot_with_a_matrix_matches_mxnet(mxnet, lead, k, m, transpose_a, transpose_b, seed):
    """F.dot(x, W) as attention code writes it (one MatMul with transpose flags), batch 1 and odd sizes."""
    from porter.runtime.gluon_math_ops import gluon_dot

    rng = np.random.default_rng(seed)
    if transpose_a:
        lead = lead[:1]  # transpose_a reverses every axis of lhs: (K, N) for a matrix
        lhs = _normal(rng, (k, lead[0]))
    else:
        lhs = _normal(rng, (*lead, k))
    rhs = _normal(rng, (m, k) if transpose_b else (k, m))
    expected = mxnet.evaluate(f"nd.dot(a, b, transpose_a={transpose_a}, transpose_b={transpose_b})",
                              {"a": lhs, "b": rhs})
    actual = gluon_dot(lhs, rhs, transpose_a=transpose_a, transpose_b=transpose_b)
    assert tuple(actual.shape) == expected.shape
    assert_equivalent(expected, np.asarray(actual))


@given(batch=st.integers(1, 4), steps=st.integers(1, 6), extra=st.lists(st.integers(1, 3), max_size=2),
       axis=st.sampled_from([0, 1]), value=st.sampled_from([0.0, -1e9, 2.5]), data=st.data(),
       seed=st.integers(0, 2**16))
def test_sequence_mask_matches_mxnet(mxnet, batch, steps, extra, axis, value, data, seed):
    from porter.runtime.gluon_math_ops import gluon_sequence_mask

    lengths = np.array(data.draw(st.lists(st.integers(1, steps), min_size=batch, max_size=batch)), np.float32)
    shape = (steps, batch, *extra) if axis == 0 else (batch, steps, *extra)
    x = _normal(np.random.default_rng(seed), shape)
    expected = mxnet.evaluate(f"nd.SequenceMask(x, sequence_length=lengths, use_sequence_length=True, "
                              f"value={value}, axis={axis})", {"x": x, "lengths": lengths})
    actual = gluon_sequence_mask(x, sequence_length=lengths, use_sequence_length=True, value=value, axis=axis)
    assert_equivalent(expected, np.asarray(actual))


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), op=st.sampled_from(["zeros", "ones", "full"]),
       dtype=st.sampled_from([None, "float32", "int32", "float16"]), value=st.sampled_from([0.5, -3.0, 7.0]))
def test_creation_matches_mxnet(mxnet, shape, op, dtype, value):
    from porter.runtime.gluon_ops import gluon_full, gluon_ones, gluon_zeros

    extra = f", dtype={dtype!r}" if dtype else ""
    expression = f"nd.full({tuple(shape)}, {value}{extra})" if op == "full" else f"nd.{op}({tuple(shape)}{extra})"
    expected = mxnet.evaluate(expression, {})
    actual = {"zeros": lambda: gluon_zeros(tuple(shape), dtype=dtype), "ones": lambda: gluon_ones(tuple(shape),
              dtype=dtype), "full": lambda: gluon_full(tuple(shape), value, dtype=dtype)}[op]()
    assert actual.dtype.name == expected.dtype.name and tuple(actual.shape) == expected.shape
    np.testing.assert_array_equal(np.asarray(actual), expected)


@given(values=st.lists(st.integers(-5, 9), min_size=1, max_size=6), nested=st.booleans(),
       dtype=st.sampled_from([None, "int32", "float32", "int64"]))
def test_array_matches_mxnet(mxnet, values, nested, dtype):
    """mx.nd.array of Python data is float32 unless told (not numpy's int64/float64)."""
    from porter.runtime.gluon_ops import gluon_array

    data = [values, values[::-1]] if nested else values
    extra = f", dtype={dtype!r}" if dtype else ""
    expected = mxnet.evaluate(f"nd.array({data!r}{extra})", {})
    actual = gluon_array(data, dtype=dtype)
    assert actual.dtype.name == expected.dtype.name
    np.testing.assert_array_equal(np.asarray(actual), expected)


@given(start=st.integers(-4, 4), stop=st.one_of(st.none(), st.integers(5, 12)), step=st.sampled_from([1, 2, 0.5]),
       repeat=st.integers(1, 3), dtype=st.sampled_from(["float32", "int32"]))
def test_arange_matches_mxnet(mxnet, start, stop, step, repeat, dtype):
    from porter.runtime.gluon_ops import gluon_arange

    if stop is None and start <= 0:
        start = 3  # one argument counts from 0 up to it
    if dtype == "int32" and step != int(step):
        step = 1
    expected = mxnet.evaluate(f"nd.arange({start}, {stop}, {step}, repeat={repeat}, dtype={dtype!r})", {})
    actual = gluon_arange(start, stop, step, repeat=repeat, dtype=dtype)
    assert actual.dtype.name == expected.dtype.name
    np.testing.assert_array_equal(np.asarray(actual), expected)
