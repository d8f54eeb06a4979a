"""Numeric tests of porter.runtime.pool (pooling, resizing, padding, pixel shuffle) against real torch.

Every op is channels-last: torch input x (N, C, *spatial) is fed as to_channels_last(x) and the result compared
after to_channels_first (but `pad_in_torch_order`, which takes torch's order). Inputs are shifted negative so that max pooling over -inf padding is exercised.
"""

import numpy as np
import pytest
import tensorflow as tf
import torch
import torch.nn.functional as F
from hypothesis import assume, given
from hypothesis import strategies as st

from porter.runtime import pool as P
from porter.runtime.base import to_channels_first, to_channels_last
from porter.verify.compare import assert_equivalent

SPATIAL_CAP = {1: 11, 2: 8, 3: 5}  # per-dimension size caps keep the tests fast


def _input(rng_seed, shape, shift=-2.0):
    return (np.random.default_rng(rng_seed).standard_normal(shape) + shift).astype(np.float32)


def _torch(fn, x, reject=True):
    """torch's result, or (in property tests) reject the example where torch refuses the arguments."""
    try:
        with torch.no_grad():
            return fn(torch.from_numpy(x)).numpy()
    except (RuntimeError, ValueError, NotImplementedError):
        if not reject:
            raise
        assume(False)


def _ported(fn, x):
    return np.asarray(to_channels_first(fn(to_channels_last(tf.constant(x)))))


def _jit(fn, x):
    """Run `fn` on channels-last x under XLA with an unknown batch size."""
    x_cl = to_channels_last(tf.constant(x))
    spec = tf.TensorSpec([None] + list(x_cl.shape[1:]), x_cl.dtype)
    compiled = tf.function(fn, jit_compile=True, input_signature=[spec], autograph=False)
    return np.asarray(to_channels_first(compiled(x_cl)))


def _transposes(fn, x):
    x_cl = to_channels_last(tf.constant(x))
    spec = tf.TensorSpec([None] + list(x_cl.shape[1:]), x_cl.dtype)
    graph = tf.function(fn, autograph=False).get_concrete_function(spec).graph
    return [op for op in graph.get_operations() if op.type == "Transpose"]


@st.composite
def window_case(draw, dims, dilation=True):
    """kernel/stride/padding/dilation/sizes that torch accepts (padding <= kernel // 2, output >= 1)."""
    kernel = tuple(draw(st.integers(1, 4)) for _ in range(dims))
    stride = draw(st.one_of(st.none(), st.tuples(*[st.integers(1, 3)] * dims)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    dil = tuple(draw(st.integers(1, 2)) for _ in range(dims)) if dilation else (1,) * dims
    sizes = tuple(draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), SPATIAL_CAP[dims] + d * (k - 1)))
                  for k, p, d in zip(kernel, padding, dil))
    return kernel, stride, padding, dil, sizes


def _maybe_int(values, use_int):
    return values[0] if use_int and len(set(values)) == 1 else values


@given(dims=st.sampled_from([1, 2, 3]), data=st.data(), batch=st.integers(1, 3), channels=st.integers(1, 4),
       ceil_mode=st.booleans(), seed=st.integers(0, 2**16))
def test_max_pool_matches_torch(dims, data, batch, channels, ceil_mode, seed):
    kernel, stride, padding, dilation, sizes = data.draw(window_case(dims))
    use_int = data.draw(st.booleans())
    kernel, padding, dilation = (_maybe_int(v, use_int) for v in (kernel, padding, dilation))
    x = _input(seed, (batch, channels, *sizes))
    module = getattr(torch.nn, f"MaxPool{dims}d")(kernel, stride, padding, dilation, ceil_mode=ceil_mode)
    expected = _torch(module, x)
    ported = getattr(P, f"MaxPool{dims}d")(kernel, stride, padding, dilation, ceil_mode=ceil_mode)
    assert_equivalent(expected, _ported(ported, x))
    functional = getattr(P, f"max_pool{dims}d")
    assert_equivalent(expected, _ported(lambda t: functional(t, kernel, stride, padding, dilation, ceil_mode), x))


@given(dims=st.sampled_from([1, 2, 3]), data=st.data(), batch=st.integers(1, 3), channels=st.integers(1, 4),
       ceil_mode=st.booleans(), count_include_pad=st.booleans(), divisor=st.one_of(st.none(), st.integers(1, 7)),
       seed=st.integers(0, 2**16))
def test_avg_pool_matches_torch(dims, data, batch, channels, ceil_mode, count_include_pad, divisor, seed):
    kernel, stride, padding, _, sizes = data.draw(window_case(dims, dilation=False))
    x = _input(seed, (batch, channels, *sizes))
    if dims == 1:
        args = (kernel, stride, padding, ceil_mode, count_include_pad)
    else:
        args = (kernel, stride, padding, ceil_mode, count_include_pad, divisor)
    expected = _torch(getattr(torch.nn, f"AvgPool{dims}d")(*args), x)
    assert_equivalent(expected, _ported(getattr(P, f"AvgPool{dims}d")(*args), x))
    functional = getattr(P, f"avg_pool{dims}d")
    assert_equivalent(expected, _ported(lambda t: functional(t, *args), x))


@given(dims=st.sampled_from([1, 2, 3]), data=st.data(), mode=st.sampled_from(["avg", "max"]),
       batch=st.integers(1, 3), channels=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_adaptive_pool_matches_torch(dims, data, mode, batch, channels, seed):
    sizes = tuple(data.draw(st.integers(1, 3 * SPATIAL_CAP[dims] // 2)) for _ in range(dims))
    outputs = tuple(data.draw(st.one_of(st.none(), st.integers(1, size + 2))) for size in sizes)
    if dims == 1 or (len(set(outputs)) == 1 and data.draw(st.booleans())):
        output_size = outputs[0]
        if output_size is None:
            output_size = 1
    else:
        output_size = outputs
    name = f"Adaptive{mode.capitalize()}Pool{dims}d"
    x = _input(seed, (batch, channels, *sizes))
    expected = _torch(getattr(torch.nn, name)(output_size), x)
    assert_equivalent(expected, _ported(getattr(P, name)(output_size), x))
    functional = getattr(P, f"adaptive_{mode}_pool{dims}d")
    assert_equivalent(expected, _ported(lambda t: functional(t, output_size), x))


MODES = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "linear": (1,), "bilinear": (2,), "trilinear": (3,),
         "bicubic": (2,), "area": (1, 2, 3)}


@given(mode=st.sampled_from(sorted(MODES)), data=st.data(), batch=st.integers(1, 2), channels=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_interpolate_matches_torch(mode, data, batch, channels, seed):
    dims = data.draw(st.sampled_from(MODES[mode]))
    sizes = tuple(data.draw(st.integers(1, SPATIAL_CAP[dims])) for _ in range(dims))
    align_corners = data.draw(st.booleans()) if mode in ("linear", "bilinear", "trilinear", "bicubic") else None
    recompute = None
    if data.draw(st.booleans()):
        size = tuple(data.draw(st.integers(1, 2 * SPATIAL_CAP[dims])) for _ in range(dims))
        size = size[0] if data.draw(st.booleans()) else size
        kwargs = {"size": size}
    else:
        factors = st.sampled_from([0.5, 0.75, 1.0, 1.3, 1.5, 2.0, 2.5, 3.0, 4.0, 1 / 3])
        scale = tuple(data.draw(factors) for _ in range(dims))
        scale = scale[0] if data.draw(st.booleans()) else scale
        recompute = data.draw(st.sampled_from([None, False, True]))
        kwargs = {"scale_factor": scale, "recompute_scale_factor": recompute}
    kwargs.update(mode=mode, align_corners=align_corners)
    x = _input(seed, (batch, channels, *sizes), shift=0.0)
    expected = _torch(lambda t: F.interpolate(t, **kwargs), x)
    assume(expected.size > 0)  # torch allows scale factors that empty a dimension; porter refuses them
    assert_equivalent(expected, _ported(lambda t: P.interpolate(t, **kwargs), x))
    if "recompute_scale_factor" not in kwargs:
        layer = P.Upsample(kwargs["size"], None, mode, align_corners)
        assert_equivalent(expected, _ported(layer, x))
    else:
        layer = P.Upsample(None, kwargs["scale_factor"], mode, align_corners, recompute)
        assert_equivalent(expected, _ported(layer, x))


@given(data=st.data(), batch=st.integers(1, 2), channels=st.integers(1, 3), seed=st.integers(0, 2**16),
       bilinear=st.booleans())
def test_upsampling_2d_modules_match_torch(data, batch, channels, seed, bilinear):
    sizes = (data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7)))
    if data.draw(st.booleans()):
        args = (data.draw(st.one_of(st.integers(1, 12), st.tuples(st.integers(1, 12), st.integers(1, 12)))), None)
    else:
        args = (None, data.draw(st.sampled_from([2, 3, 1.5, 0.5, (2.0, 3.0)])))
    name = "UpsamplingBilinear2d" if bilinear else "UpsamplingNearest2d"
    x = _input(seed, (batch, channels, *sizes), shift=0.0)
    expected = _torch(getattr(torch.nn, name)(*args), x)
    assume(expected.size > 0)
    assert_equivalent(expected, _ported(getattr(P, name)(*args), x))
    if bilinear:
        assert_equivalent(expected, _ported(lambda t: P.upsample_bilinear(t, *args), x))
    else:
        assert_equivalent(expected, _ported(lambda t: P.upsample_nearest(t, *args), x))


@given(factor=st.integers(1, 3), batch=st.integers(1, 3), channels=st.integers(1, 4), height=st.integers(1, 5),
       width=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_pixel_shuffle_matches_torch(factor, batch, channels, height, width, seed):
    x = _input(seed, (batch, channels * factor * factor, height, width))
    expected = _torch(torch.nn.PixelShuffle(factor), x)
    assert_equivalent(expected, _ported(P.PixelShuffle(factor), x), tolerance=0)
    assert_equivalent(expected, _ported(lambda t: P.pixel_shuffle(t, factor), x), tolerance=0)
    y = _input(seed, (batch, channels, height * factor, width * factor))
    expected = _torch(torch.nn.PixelUnshuffle(factor), y)
    assert_equivalent(expected, _ported(P.PixelUnshuffle(factor), y), tolerance=0)
    assert_equivalent(expected, _ported(lambda t: P.pixel_unshuffle(t, factor), y), tolerance=0)
    round_trip = P.pixel_unshuffle(P.pixel_shuffle(to_channels_last(tf.constant(x)), factor), factor)
    assert np.array_equal(np.asarray(to_channels_first(round_trip)), x)


@given(dims=st.sampled_from([1, 2, 3]), kind=st.sampled_from(["Zero", "Constant", "Reflection", "Replication",
                                                               "Circular"]),
       data=st.data(), batch=st.integers(1, 2), channels=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_pad_modules_match_torch(dims, kind, data, batch, channels, seed):
    sizes = tuple(data.draw(st.integers(1, 5)) for _ in range(dims))
    low = -1 if kind in ("Zero", "Constant") else 0
    if data.draw(st.booleans()):
        padding = data.draw(st.integers(max(low, 0), 3))
    else:
        padding = tuple(data.draw(st.integers(low, 3)) for _ in range(2 * dims))
    args = (padding, data.draw(st.floats(-3, 3))) if kind == "Constant" else (padding,)
    x = _input(seed, (batch, channels, *sizes))
    expected = _torch(getattr(torch.nn, f"{kind}Pad{dims}d")(*args), x)
    assert_equivalent(expected, _ported(getattr(P, f"{kind}Pad{dims}d")(*args), x), tolerance=0)


@given(rank=st.integers(2, 5), mode=st.sampled_from(["constant", "reflect", "replicate", "circular"]),
       data=st.data(), seed=st.integers(0, 2**16), held=st.sampled_from(["channels_last", "torch", "permuted"]))
def test_functional_pad_matches_torch(rank, mode, data, seed, held):
    """F.pad channels-last (`pad`), on a tensor the port holds in torch's order (`pad_in_torch_order`: Swin's
    (B, H, W, C) maps, sequences), and on one whose axes hold torch's dims in any order (`pad_in_order`: a permute
    left pending)."""
    shape = tuple(data.draw(st.integers(1, 5)) for _ in range(rank))
    # torch: constant pads any number of dims (negative = crop); the others pad the last k dims of a rank k+1
    # or k+2 tensor (k <= 3), reflect by less than the size, circular by at most the size
    if mode == "constant":
        pairs = data.draw(st.integers(1, rank))
    else:
        pairs = data.draw(st.sampled_from([k for k in (rank - 2, rank - 1) if 1 <= k <= 3]))
    pad = []
    for k in range(pairs):
        size = shape[rank - 1 - k]
        high = {"constant": 3, "reflect": size - 1, "replicate": 3, "circular": size}[mode]
        pad += [data.draw(st.integers(-1 if mode == "constant" else 0, high)) for _ in range(2)]
    value = data.draw(st.one_of(st.none(), st.floats(-2, 2))) if mode == "constant" else None
    x = _input(seed, shape)
    expected = _torch(lambda t: F.pad(t, pad, mode=mode, value=value), x)
    if held == "torch":
        got = np.asarray(P.pad_in_torch_order(tf.constant(x), pad, mode, value))
    elif held == "permuted":
        order = data.draw(st.permutations(range(rank)))
        stored = P.pad_in_order(tf.constant(np.transpose(x, order)), order, pad, mode, value)
        got = np.transpose(np.asarray(stored), np.argsort(order))
    else:
        got = _ported(lambda t: P.pad(t, pad, mode, value), x)
    assert_equivalent(expected, got, tolerance=0)


JIT_CASES = [
    (lambda: P.MaxPool1d(3, 2, 1, ceil_mode=True), lambda: torch.nn.MaxPool1d(3, 2, 1, ceil_mode=True), (1, 3, 10)),
    (lambda: P.MaxPool2d(3, 2, 1, dilation=2, ceil_mode=True),
     lambda: torch.nn.MaxPool2d(3, 2, 1, dilation=2, ceil_mode=True), (2, 3, 9, 8)),
    (lambda: P.MaxPool3d(2, 2, 1), lambda: torch.nn.MaxPool3d(2, 2, 1), (1, 2, 5, 4, 3)),
    (lambda: P.AvgPool1d(3, 2, 1, True, False), lambda: torch.nn.AvgPool1d(3, 2, 1, True, False), (1, 3, 10)),
    (lambda: P.AvgPool2d(3, 2, 1, True, False), lambda: torch.nn.AvgPool2d(3, 2, 1, True, False), (2, 3, 9, 8)),
    (lambda: P.AvgPool3d(3, 2, 1, False, True, 5), lambda: torch.nn.AvgPool3d(3, 2, 1, False, True, 5),
     (1, 2, 5, 4, 3)),
    (lambda: P.AdaptiveAvgPool1d(4), lambda: torch.nn.AdaptiveAvgPool1d(4), (1, 3, 7)),
    (lambda: P.AdaptiveAvgPool2d((3, None)), lambda: torch.nn.AdaptiveAvgPool2d((3, None)), (2, 3, 7, 5)),
    (lambda: P.AdaptiveAvgPool2d(1), lambda: torch.nn.AdaptiveAvgPool2d(1), (2, 3, 7, 5)),
    (lambda: P.AdaptiveAvgPool3d((2, 3, 2)), lambda: torch.nn.AdaptiveAvgPool3d((2, 3, 2)), (1, 2, 5, 7, 4)),
    (lambda: P.AdaptiveMaxPool1d(3), lambda: torch.nn.AdaptiveMaxPool1d(3), (1, 3, 7)),
    (lambda: P.AdaptiveMaxPool2d((3, 2)), lambda: torch.nn.AdaptiveMaxPool2d((3, 2)), (2, 3, 7, 5)),
    (lambda: P.AdaptiveMaxPool3d(2), lambda: torch.nn.AdaptiveMaxPool3d(2), (1, 2, 5, 3, 4)),
    (lambda: P.Upsample(scale_factor=2), lambda: torch.nn.Upsample(scale_factor=2), (2, 3, 5, 4)),
    (lambda: P.Upsample((7, 9)), lambda: torch.nn.Upsample((7, 9)), (2, 3, 5, 4)),
    (lambda: P.Upsample(scale_factor=1.5, mode="bilinear", align_corners=False),
     lambda: torch.nn.Upsample(scale_factor=1.5, mode="bilinear", align_corners=False), (2, 3, 5, 4)),
    (lambda: P.Upsample(size=(3, 11), mode="bicubic", align_corners=True),
     lambda: torch.nn.Upsample(size=(3, 11), mode="bicubic", align_corners=True), (1, 2, 5, 4)),
    (lambda: P.Upsample(size=9, mode="linear"), lambda: torch.nn.Upsample(size=9, mode="linear"), (1, 2, 5)),
    (lambda: P.Upsample(scale_factor=2, mode="trilinear"), lambda: torch.nn.Upsample(scale_factor=2, mode="trilinear"),
     (1, 2, 3, 4, 2)),
    (lambda: P.UpsamplingNearest2d(scale_factor=3), lambda: torch.nn.UpsamplingNearest2d(scale_factor=3),
     (1, 2, 3, 4)),
    (lambda: P.UpsamplingBilinear2d((6, 7)), lambda: torch.nn.UpsamplingBilinear2d((6, 7)), (1, 2, 3, 4)),
    (lambda: P.PixelShuffle(2), lambda: torch.nn.PixelShuffle(2), (2, 12, 3, 4)),
    (lambda: P.PixelUnshuffle(2), lambda: torch.nn.PixelUnshuffle(2), (2, 3, 4, 6)),
    (lambda: P.ZeroPad2d((1, 2, 0, 3)), lambda: torch.nn.ZeroPad2d((1, 2, 0, 3)), (1, 2, 3, 4)),
    (lambda: P.ConstantPad1d(2, 0.5), lambda: torch.nn.ConstantPad1d(2, 0.5), (1, 2, 3)),
    (lambda: P.ReflectionPad2d(2), lambda: torch.nn.ReflectionPad2d(2), (1, 2, 3, 4)),
    (lambda: P.ReplicationPad2d((1, 0, 2, 3)), lambda: torch.nn.ReplicationPad2d((1, 0, 2, 3)), (1, 2, 3, 4)),
    (lambda: P.CircularPad3d(1), lambda: torch.nn.CircularPad3d(1), (1, 2, 3, 4, 2)),
    (lambda: P.ReflectionPad3d((1, 2, 0, 1, 1, 1)), lambda: torch.nn.ReflectionPad3d((1, 2, 0, 1, 1, 1)),
     (1, 2, 3, 4, 3)),
]


@pytest.mark.parametrize("case", range(len(JIT_CASES)))
def test_layers_compile_under_xla_with_unknown_batch(case):
    make_ported, make_torch, shape = JIT_CASES[case]
    x = _input(case, shape)
    expected = _torch(make_torch(), x, False)
    layer = make_ported()
    assert_equivalent(expected, _jit(layer, x))
    assert not _transposes(layer, x), "pooling/resize layers must not add Transpose ops"


def test_functional_forms_compile_under_xla():
    x = _input(1, (2, 3, 9, 7))
    cases = [
        (lambda t: P.max_pool2d(t, 3, 2, 1, 1, True), lambda t: F.max_pool2d(t, 3, 2, 1, 1, True)),
        (lambda t: P.avg_pool2d(t, 2, 2, 1, True, False), lambda t: F.avg_pool2d(t, 2, 2, 1, True, False)),
        (lambda t: P.adaptive_avg_pool2d(t, (4, 3)), lambda t: F.adaptive_avg_pool2d(t, (4, 3))),
        (lambda t: P.adaptive_max_pool2d(t, (4, 3)), lambda t: F.adaptive_max_pool2d(t, (4, 3))),
        (lambda t: P.interpolate(t, scale_factor=1.7, mode="bilinear", align_corners=True),
         lambda t: F.interpolate(t, scale_factor=1.7, mode="bilinear", align_corners=True)),
        (lambda t: P.interpolate(t, size=(5, 13), mode="nearest"), lambda t: F.interpolate(t, size=(5, 13))),
        (lambda t: P.interpolate(t, size=(4, 3), mode="area"), lambda t: F.interpolate(t, size=(4, 3), mode="area")),
        (lambda t: P.pad(t, (1, 2, 3, 0), "reflect"), lambda t: F.pad(t, (1, 2, 3, 0), "reflect")),
        (lambda t: P.pad(t, (1, 2, 3, 0, 1, 1), "constant", -1.0),
         lambda t: F.pad(t, (1, 2, 3, 0, 1, 1), "constant", -1.0)),
        (lambda t: P.pad(t, (2, 1, 0, 1), "replicate"), lambda t: F.pad(t, (2, 1, 0, 1), "replicate")),
    ]
    for ported, reference in cases:
        assert_equivalent(_torch(reference, x, False), _jit(ported, x))
    y = _input(2, (2, 3, 11))
    assert_equivalent(_torch(lambda t: F.max_pool1d(t, 2, 2, 1, 1, True), y, False),
                      _jit(lambda t: P.max_pool1d(t, 2, 2, 1, 1, True), y))
    assert_equivalent(_torch(lambda t: F.adaptive_avg_pool1d(t, 4), y, False),
                      _jit(lambda t: P.adaptive_avg_pool1d(t, 4), y))
    z = _input(3, (1, 8, 3, 4))
    assert_equivalent(_torch(lambda t: F.pixel_shuffle(t, 2), z, False), _jit(lambda t: P.pixel_shuffle(t, 2), z))


def test_nearest_uses_torch_floor_index_not_tf_resize():
    """torch 'nearest' picks floor(dst * in / out); tf.image.resize nearest rounds half-pixel centres."""
    x = np.arange(5, dtype=np.float32).reshape(1, 1, 5)
    expected = F.interpolate(torch.from_numpy(x), size=7).numpy()
    assert np.array_equal(_ported(lambda t: P.interpolate(t, size=7), x), expected)
    x2 = np.arange(10, dtype=np.float32).reshape(1, 1, 10)
    expected = F.interpolate(torch.from_numpy(x2), scale_factor=0.3).numpy()
    assert np.array_equal(_ported(lambda t: P.interpolate(t, scale_factor=0.3), x2), expected)


def test_max_pool_pads_with_minus_infinity():
    x = -np.ones((1, 1, 4, 4), np.float32) * 5
    expected = F.max_pool2d(torch.from_numpy(x), 3, 2, 1).numpy()
    actual = _ported(lambda t: P.max_pool2d(t, 3, 2, 1), x)
    assert np.array_equal(actual, expected) and actual.max() == -5


def test_layers_in_a_keras_functional_model():
    import keras

    inputs = keras.Input((9, 8, 4))
    y = P.MaxPool2d(3, 2, 1, ceil_mode=True)(inputs)
    y = P.Upsample(scale_factor=2, mode="bilinear", align_corners=False)(y)
    y = P.ReflectionPad2d(1)(y)
    y = P.AvgPool2d(2, 2, 0, True, False)(y)
    y = P.PixelUnshuffle(2)(y)
    y = P.AdaptiveAvgPool2d((2, 3))(y)
    model = keras.Model(inputs, y)
    x = _input(0, (2, 4, 9, 8))
    reference = torch.nn.Sequential(torch.nn.MaxPool2d(3, 2, 1, ceil_mode=True),
                                    torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
                                    torch.nn.ReflectionPad2d(1), torch.nn.AvgPool2d(2, 2, 0, True, False),
                                    torch.nn.PixelUnshuffle(2), torch.nn.AdaptiveAvgPool2d((2, 3)))
    assert_equivalent(_torch(reference, x, False), _ported(model, x))


@pytest.mark.parametrize("layer", [
    P.MaxPool2d(3, 2, 1, 2, False, True), P.AvgPool1d(3), P.AvgPool3d(2, 1, 1, True, False, 3),
    P.AdaptiveAvgPool2d((3, None)), P.AdaptiveMaxPool1d(2), P.Upsample(scale_factor=(2, 3), mode="bicubic"),
    P.UpsamplingNearest2d(size=4), P.UpsamplingBilinear2d(scale_factor=2), P.PixelShuffle(3),
    P.PixelUnshuffle(2), P.ZeroPad2d(1), P.ConstantPad3d((1, 2, 3, 4, 5, 6), 2.5), P.ReplicationPad1d((1, 2)),
    P.CircularPad2d(2), P.ReflectionPad1d(3),
], ids=lambda layer: type(layer).__name__)
def test_get_config_round_trip(layer):
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    assert layer.porter_layout == "channels_last" and layer.torch_state() == []


def test_float16_and_bfloat16_inputs_keep_their_dtype():
    x = _input(0, (1, 2, 6, 5))
    reference = F.interpolate(torch.from_numpy(x), scale_factor=2, mode="bilinear", align_corners=False).numpy()
    for dtype in (tf.float16, tf.bfloat16):
        x_cl = tf.cast(to_channels_last(tf.constant(x)), dtype)
        for fn in (lambda t: P.interpolate(t, scale_factor=2, mode="bilinear"), lambda t: P.max_pool2d(t, 3, 2, 1),
                   lambda t: P.avg_pool2d(t, 3, 2, 1, False, False), lambda t: P.adaptive_avg_pool2d(t, (4, 3)),
                   lambda t: P.interpolate(t, size=(7, 9), mode="bicubic"), lambda t: P.pad(t, (1, 1), "replicate")):
            assert fn(x_cl).dtype == dtype
        y = to_channels_first(P.interpolate(tf.cast(to_channels_last(tf.constant(x)), tf.float16), scale_factor=2,
                                            mode="bilinear"))
        assert_equivalent(reference, np.asarray(tf.cast(y, tf.float32)), tolerance=1e-2)


def test_unsupported_options_raise():
    x = tf.zeros((1, 4, 4, 2))
    with pytest.raises(NotImplementedError):
        P.interpolate(x, scale_factor=0.5, mode="bilinear", antialias=True)
