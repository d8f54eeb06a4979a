"""Numeric tests of porter.runtime.activation against real torch activation modules and functions."""

import inspect
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from porter.rules import registry
from porter.runtime import activation as A
from porter.runtime.base import to_channels_first, to_channels_last
from porter.verify.compare import assert_equivalent
from porter.verify.torch_bridge import copy_torch_weights
from tests.runtime.rule_families import family_rules

TOLERANCE = 1e-5  # relative to max(1, |output|); the measured errors are ~1e-6 and below


def _floats(low, high):
    # no float32 denormals: TF and XLA flush them to zero, torch on CPU does not
    return st.floats(low, high, allow_nan=False, allow_infinity=False).map(lambda v: 0.0 if abs(v) < 1e-30 else v)


# Module name -> (functional name, strategy of constructor/function keyword arguments).
ELEMENTWISE = {
    "ReLU": ("relu", st.just({})),
    "ReLU6": ("relu6", st.just({})),
    "LeakyReLU": ("leaky_relu", st.fixed_dictionaries({"negative_slope": _floats(-0.5, 3.0)})),
    "ELU": ("elu", st.fixed_dictionaries({"alpha": _floats(0.1, 3.0)})),
    "SELU": ("selu", st.just({})),
    "CELU": ("celu", st.fixed_dictionaries({"alpha": _floats(0.1, 3.0)})),
    "GELU": ("gelu", st.fixed_dictionaries({"approximate": st.sampled_from(["none", "tanh"])})),
    "SiLU": ("silu", st.just({})),
    "Mish": ("mish", st.just({})),
    "Hardswish": ("hardswish", st.just({})),
    "Hardsigmoid": ("hardsigmoid", st.just({})),
    "Hardtanh": ("hardtanh", st.fixed_dictionaries({"min_val": _floats(-3.0, -0.1), "max_val": _floats(0.0, 3.0)})),
    "Sigmoid": ("sigmoid", st.just({})),
    "Tanh": ("tanh", st.just({})),
    "Softplus": ("softplus", st.fixed_dictionaries({"beta": _floats(0.25, 4.0), "threshold": _floats(0.5, 25.0)})),
    "Softsign": ("softsign", st.just({})),
    "Tanhshrink": ("tanhshrink", st.just({})),
    "LogSigmoid": ("logsigmoid", st.just({})),
    "Threshold": ("threshold", st.fixed_dictionaries({"threshold": _floats(-2.0, 2.0), "value": _floats(-5.0, 5.0)})),
    "Hardshrink": ("hardshrink", st.fixed_dictionaries({"lambd": _floats(0.0, 2.0)})),
    "Softshrink": ("softshrink", st.fixed_dictionaries({"lambd": _floats(0.0, 2.0)})),
}


def _boundaries(kwargs):
    """Values where the op switches branch: the branch point itself and its float32 neighbours."""
    points = [0.0, 3.0, -3.0, 6.0, 1.0, -1.0]
    if "threshold" in kwargs and "beta" in kwargs:  # softplus switches where beta * x > threshold
        points.append(kwargs["threshold"] / kwargs["beta"])
    elif "threshold" in kwargs:
        points.append(kwargs["threshold"])
    for key in ("min_val", "max_val", "lambd"):
        if key in kwargs:
            points += [kwargs[key], -kwargs[key]]
    points = np.asarray(points, np.float32)
    up, down = np.nextafter(points, np.float32(np.inf)), np.nextafter(points, np.float32(-np.inf))
    points = np.concatenate([points, up, down, np.float32([1e-7, -1e-7, 1e-30, -1e-30, 40, -40, 90, -90, -104])])
    # TF (like XLA on TPU) flushes float32 denormals to zero; torch on CPU does not: keep them out
    return points[(points == 0) | (np.abs(points) >= np.finfo(np.float32).tiny)]


def _inputs(seed, shape, exponent, kwargs):
    """Normal values scaled by 10**exponent, with the op's branch points written over the first elements."""
    x = (np.random.default_rng(seed).standard_normal(shape) * 10.0 ** exponent).astype(np.float32)
    special = _boundaries(kwargs)
    flat = x.reshape(-1)
    flat[:min(flat.size, special.size)] = special[:flat.size]
    return flat.reshape(shape)


shapes = st.lists(st.integers(1, 6), min_size=1, max_size=4)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
@given(data=st.data(), shape=shapes, exponent=st.integers(-3, 3), seed=st.integers(0, 2**16))
def test_elementwise_matches_torch(name, data, shape, exponent, seed):
    function_name, kwargs_strategy = ELEMENTWISE[name]
    kwargs = data.draw(kwargs_strategy)
    x = _inputs(seed, shape, exponent, kwargs)
    expected = getattr(torch.nn, name)(**kwargs)(torch.from_numpy(x)).numpy()
    assert_equivalent(expected, np.asarray(getattr(A, name)(**kwargs)(x)), TOLERANCE, f"{name} module")
    expected_f = getattr(F, function_name)(torch.from_numpy(x), **kwargs).numpy()
    assert_equivalent(expected_f, np.asarray(getattr(A, function_name)(x, **kwargs)), TOLERANCE, function_name)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
@given(data=st.data(), exponent=st.integers(-3, 3), seed=st.integers(0, 2**16))
def test_elementwise_gradients_match_torch(name, data, exponent, seed):
    """Gradients away from the branch points (where torch and TF may pick different one-sided derivatives)."""
    function_name, kwargs_strategy = ELEMENTWISE[name]
    kwargs = data.draw(kwargs_strategy)
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((3, 7)) * 10.0 ** exponent).astype(np.float32)
    upstream = rng.standard_normal(x.shape).astype(np.float32)
    xt = torch.from_numpy(x).requires_grad_()
    (getattr(F, function_name)(xt, **kwargs) * torch.from_numpy(upstream)).sum().backward()
    xv = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xv)
        y = getattr(A, function_name)(xv, **kwargs) * upstream
    grad = tape.gradient(y, xv)
    assert_equivalent(xt.grad.numpy(), np.asarray(grad), TOLERANCE, f"{function_name} gradient")


def test_softplus_large_inputs_stay_finite():
    x = tf.constant([-1e4, -100.0, 0.0, 30.0, 1e4, 3e38], tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = A.softplus(x, beta=0.5, threshold=100.0)
    assert np.all(np.isfinite(np.asarray(tape.gradient(y, x))))
    assert_equivalent(F.softplus(torch.from_numpy(x.numpy()), 0.5, 100.0).numpy(), np.asarray(y))


@given(channels=st.integers(1, 6), rank=st.integers(2, 5), single=st.booleans(), exponent=st.integers(-3, 3),
       seed=st.integers(0, 2**16))
def test_prelu_matches_torch(channels, rank, single, exponent, seed):
    torch.manual_seed(seed)
    num = 1 if single else channels
    reference = torch.nn.PReLU(num, init=0.1)
    with torch.no_grad():
        reference.weight.uniform_(-1.0, 2.0)
    ported = copy_torch_weights(reference, A.PReLU(num, init=0.1))
    shape = (2, channels) + tuple(range(3, 3 + rank - 2))
    x = _inputs(seed, shape, exponent, {})
    expected = reference(torch.from_numpy(x)).detach().numpy()
    assert_equivalent(expected, np.asarray(to_channels_first(ported(to_channels_last(tf.constant(x))))))
    assert_equivalent(expected, np.asarray(to_channels_first(A.prelu(to_channels_last(tf.constant(x)),
                                                                     ported.weight))))
    assert ported.porter_layout == ("any" if num == 1 else "channels_last")


def test_prelu_default_init_and_state():
    layer = A.PReLU(3)
    assert np.allclose(layer.weight.numpy(), 0.25)
    assert [entry.key for entry in layer.torch_state("act.")] == ["act.weight"]


SOFTMAXES = {"Softmax": "softmax", "LogSoftmax": "log_softmax", "Softmin": "softmin"}


@pytest.mark.parametrize("name", sorted(SOFTMAXES))
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=4), data=st.data(), exponent=st.integers(-3, 3),
       seed=st.integers(0, 2**16))
def test_softmax_family_matches_torch(name, shape, data, exponent, seed):
    function_name = SOFTMAXES[name]
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = _inputs(seed, shape, exponent, {})
    expected = getattr(torch.nn, name)(dim)(torch.from_numpy(x)).numpy()
    assert_equivalent(expected, np.asarray(getattr(A, name)(dim)(x)), TOLERANCE)
    assert_equivalent(expected, np.asarray(getattr(A, function_name)(x, dim)), TOLERANCE)
    # dtype: torch casts the input first
    expected64 = getattr(F, function_name)(torch.from_numpy(x), dim, dtype=torch.float64).numpy()
    actual64 = np.asarray(getattr(A, function_name)(x, dim, dtype="float64"))
    assert actual64.dtype == np.float64
    assert_equivalent(expected64, actual64, 1e-12)


@pytest.mark.parametrize("name", sorted(SOFTMAXES))
@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_softmax_legacy_implicit_dim(name, rank):
    x = np.random.default_rng(rank).standard_normal((2, 3, 4, 5)[:rank]).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(torch.nn, name)()(torch.from_numpy(x)).numpy()
        actual = np.asarray(getattr(A, name)()(x))
    assert_equivalent(expected, actual, TOLERANCE)


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data(), exponent=st.integers(-3, 3),
       seed=st.integers(0, 2**16))
def test_glu_matches_torch(shape, data, exponent, seed):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    shape[dim] *= 2
    x = _inputs(seed, shape, exponent, {})
    expected = torch.nn.GLU(dim)(torch.from_numpy(x)).numpy()
    assert_equivalent(expected, np.asarray(A.GLU(dim)(x)), TOLERANCE)
    assert_equivalent(expected, np.asarray(A.glu(x, dim)), TOLERANCE)


def test_glu_odd_size_raises():
    with pytest.raises(ValueError, match="even"):
        A.glu(np.zeros((2, 3), np.float32))


@given(lower=_floats(0.0, 0.5), width=_floats(0.0, 0.5), seed=st.integers(0, 2**16))
def test_rrelu(lower, width, seed):
    upper = lower + width
    x = _inputs(seed, (4, 50), 1, {})
    expected = torch.nn.RReLU(lower, upper).eval()(torch.from_numpy(x)).numpy()
    assert_equivalent(expected, np.asarray(A.RReLU(lower, upper)(x)), TOLERANCE)
    assert_equivalent(expected, np.asarray(A.rrelu(x, lower, upper, training=False)), TOLERANCE)
    for y in (A.RReLU(lower, upper)(x, training=True), A.rrelu(x, lower, upper, training=True)):
        y = np.asarray(y)
        assert np.array_equal(y[x >= 0], x[x >= 0])
        slope = y[x < 0] / x[x < 0]
        assert np.all(slope >= lower - 1e-6) and np.all(slope <= upper + 1e-6)


def test_inplace_arguments_are_ignored():
    x = np.float32([[-2.0, 0.5, 3.0]])
    assert np.array_equal(np.asarray(A.relu(x, inplace=True)), np.float32([[0.0, 0.5, 3.0]]))
    assert np.array_equal(np.asarray(A.ReLU(inplace=True)(x)), np.float32([[0.0, 0.5, 3.0]]))
    assert_equivalent(F.elu(torch.from_numpy(x), 0.5).numpy(), np.asarray(A.elu(x, 0.5, True)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch deprecates min_value / max_value
        expected = torch.nn.Hardtanh(min_value=-1.5, max_value=2.0)(torch.from_numpy(x)).numpy()
    assert_equivalent(expected, np.asarray(A.Hardtanh(min_value=-1.5, max_value=2.0)(x)))


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(ValueError, match="approximate"):
        A.GELU("erf")


@pytest.mark.parametrize("layer,torch_module", [
    (lambda: A.GELU(), lambda: torch.nn.GELU()),
    (lambda: A.GELU("tanh"), lambda: torch.nn.GELU("tanh")),
    (lambda: A.Softplus(2.0, 5.0), lambda: torch.nn.Softplus(2.0, 5.0)),
    (lambda: A.Mish(), lambda: torch.nn.Mish()),
    (lambda: A.Hardswish(), lambda: torch.nn.Hardswish()),
    (lambda: A.Softmax(1), lambda: torch.nn.Softmax(1)),
    (lambda: A.GLU(1), lambda: torch.nn.GLU(1)),
    (lambda: A.LeakyReLU(0.2), lambda: torch.nn.LeakyReLU(0.2)),
    (lambda: A.SELU(), lambda: torch.nn.SELU()),
])
def test_jit_compile_unknown_batch(layer, torch_module):
    x = _inputs(7, (3, 4, 5), 1, {})
    ported = layer()
    compiled = tf.function(ported, jit_compile=True,
                           input_signature=[tf.TensorSpec([None, 4, 5], tf.float32)])
    assert_equivalent(torch_module()(torch.from_numpy(x)).numpy(), np.asarray(compiled(tf.constant(x))), TOLERANCE)


def test_prelu_jit_compile():
    x = _inputs(3, (2, 5, 6, 4), 1, {})  # channels-last
    layer = A.PReLU(4)
    compiled = tf.function(layer, jit_compile=True, input_signature=[tf.TensorSpec([None, 5, 6, 4], tf.float32)])
    assert_equivalent(np.where(x > 0, x, 0.25 * x), np.asarray(compiled(tf.constant(x))))


def test_mixed_precision_keeps_dtype():
    x = tf.constant(_inputs(1, (2, 8), 0, {}), tf.float16)
    for fn in (A.gelu, A.silu, A.mish, A.softplus, A.hardswish, A.elu, A.selu, A.logsigmoid, A.softsign):
        assert fn(x).dtype == tf.float16, fn.__name__
    assert A.softmax(x, -1).dtype == tf.float16
    keras.config.set_dtype_policy("mixed_float16")
    try:
        layer = A.PReLU(8)
    finally:
        keras.config.set_dtype_policy("float32")
    assert layer.weight.dtype == "float32" and layer(x).dtype == tf.float16


def test_rules_resolve_and_signatures_fit_runtime():
    rules = family_rules("activation")
    assert len(rules) > 50
    for rule in rules:
        target = getattr(A, rule.runtime)
        if isinstance(rule, registry.FunctionRule):
            params = list(inspect.signature(target).parameters)
            # positional calls in the rule's order must land on the same runtime parameters
            assert params[:len(rule.signature.params)] == list(rule.signature.params), (rule.names, params)
        else:
            assert issubclass(target, A.TorchLayer)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
@given(data=st.data(), inplace=st.booleans(), seed=st.integers(0, 2**16))
def test_every_activation_takes_inplace_and_computes_the_same(name, data, inplace, seed):
    """timm's `create_act_layer(act_layer, inplace=True)` hands `inplace=` to whichever class it resolved (its own
    GELU takes it where torch's does not): every activation layer accepts it and computes as without it."""
    kwargs = data.draw(ELEMENTWISE[name][1])
    x = _inputs(seed, (2, 3, 5), 0, kwargs)
    expected = getattr(torch.nn, name)(**kwargs)(torch.from_numpy(x)).numpy()
    assert_equivalent(expected, np.asarray(getattr(A, name)(inplace=inplace, **kwargs)(x)), TOLERANCE, name)
