"""Property tests against real mxnet 1.9.1 (one long-lived mxnet process, tests/mxnet/mxnet_worker.py) of
porter/runtime/gluon_nn_ops.py, the operators GluonCV's model zoo calls through `F`: F.Pooling (max/avg,
valid/full convention, pad, count_include_pad, global), F.contrib.AdaptiveAvgPooling2D, F.pad (constant, edge,
reflect), F.contrib.BilinearResize2D (size, scale, like; corners aligned or not), F.UpSampling (nearest) and
F.slice. A 'full' pooling window mxnet keeps past the input is refused. The port's functions take channels-last images; the arrays mxnet sees are in its own (N, C, H, W)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.gluon_nn_ops import (
    gluon_adaptive_avg_pooling2d,
    gluon_bilinear_resize2d,
    gluon_pad,
    gluon_pooling,
    gluon_slice,
    gluon_upsampling,
)
from porter.verify.compare import assert_equivalent
from tests.mxnet.gluon_fixtures import needs_mxnet

pytestmark = needs_mxnet


def _image(seed, batch, channels, height, width):
    return np.random.default_rng(seed).standard_normal((batch, channels, height, width)).astype(np.float32)


def _last(x):
    return np.transpose(x, (0, 2, 3, 1))


def _first(y):
    return np.transpose(np.asarray(y), (0, 3, 1, 2))


images = st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 9), st.integers(1, 9))


@settings(max_examples=40, deadline=None)
@given(image=images, data=st.data(), seed=st.integers(0, 2**16))
def test_pooling_matches_mxnet(mxnet, image, data, seed):
    batch, channels, height, width = image
    kernel = (data.draw(st.integers(1, min(height, 3))), data.draw(st.integers(1, min(width, 3))))
    stride = data.draw(st.one_of(st.just(()), st.tuples(st.integers(1, 3), st.integers(1, 3))))
    pad = data.draw(st.one_of(st.just(()), st.tuples(st.integers(0, kernel[0] // 2), st.integers(0, kernel[1] // 2))))
    pool_type = data.draw(st.sampled_from(["max", "avg"]))
    convention = data.draw(st.sampled_from(["valid", "full"]))
    include = data.draw(st.sampled_from([None, True, False]))
    global_pool = data.draw(st.booleans())
    x = _image(seed, batch, channels, height, width)
    arguments = {"kernel": kernel, "pool_type": pool_type, "global_pool": global_pool,
                 "pooling_convention": convention, "stride": stride, "pad": pad, "count_include_pad": include}
    text = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    expected = mxnet.evaluate(f"nd.Pooling(x, {text})", {"x": x})
    strides, pads = stride or (1, 1), pad or (0, 0)
    past = [(-(-(n + 2 * p - k) // s)) * s >= n + p for n, k, s, p in zip((height, width), kernel, strides, pads)]
    if convention == "full" and not global_pool and any(past):  # a last window past the input: refused
        with pytest.raises(NotImplementedError):
            gluon_pooling(_last(x), **arguments)
        return
    actual = _first(gluon_pooling(_last(x), **arguments))
    assert actual.shape == expected.shape
    assert_equivalent(expected, actual)


@settings(max_examples=30, deadline=None)
@given(image=images, data=st.data(), seed=st.integers(0, 2**16))
def test_adaptive_avg_pooling_matches_mxnet(mxnet, image, data, seed):
    batch, channels, height, width = image
    size = data.draw(st.one_of(st.just(()), st.integers(1, 6), st.tuples(st.integers(1, 6), st.integers(1, 6))))
    x = _image(seed, batch, channels, height, width)
    expected = mxnet.evaluate(f"nd.contrib.AdaptiveAvgPooling2D(x, output_size={size!r})", {"x": x})
    actual = _first(gluon_adaptive_avg_pooling2d(_last(x), output_size=size))
    assert actual.shape == expected.shape
    assert_equivalent(expected, actual)


@settings(max_examples=30, deadline=None)
@given(image=st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(2, 7), st.integers(2, 7)), data=st.data(),
       seed=st.integers(0, 2**16))
def test_pad_matches_mxnet(mxnet, image, data, seed):
    batch, channels, height, width = image
    mode = data.draw(st.sampled_from(["constant", "edge", "reflect"]))
    limit = (height - 1, width - 1) if mode == "reflect" else (3, 3)
    widths = (0, 0, 0, 0) + tuple(data.draw(st.integers(0, limit[axis // 2])) for axis in range(4))
    value = data.draw(st.floats(-2, 2, width=32))
    x = _image(seed, batch, channels, height, width)
    expected = mxnet.evaluate(f"nd.pad(x, mode={mode!r}, pad_width={widths!r}, constant_value={value!r})", {"x": x})
    actual = _first(gluon_pad(_last(x), mode=mode, pad_width=widths, constant_value=value))
    assert actual.shape == expected.shape
    assert_equivalent(expected, actual)


@settings(max_examples=30, deadline=None)
@given(image=st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(2, 8), st.integers(2, 8)), data=st.data(),
       seed=st.integers(0, 2**16))
def test_bilinear_resize_matches_mxnet(mxnet, image, data, seed):
    batch, channels, height, width = image
    align = data.draw(st.booleans())
    how = data.draw(st.sampled_from(["size", "scale", "like"]))
    x = _image(seed, batch, channels, height, width)
    arrays = {"x": x}
    if how == "size":
        size = (data.draw(st.integers(1, 12)), data.draw(st.integers(1, 12)))
        call, arguments = f"height={size[0]}, width={size[1]}", {"height": size[0], "width": size[1]}
    elif how == "scale":
        scale = data.draw(st.sampled_from([0.5, 1.0, 2.0, 3.0]))
        call, arguments = f"scale_height={scale}, scale_width={scale}", {"scale_height": scale, "scale_width": scale}
    else:
        arrays["y"] = _image(seed + 1, batch, 1, data.draw(st.integers(1, 12)), data.draw(st.integers(1, 12)))
        call, arguments = "like=y, mode='like'", {"like": arrays["y"], "mode": "like"}
    expected = mxnet.evaluate(f"nd.contrib.BilinearResize2D(x, {call}, align_corners={align})", arrays)
    actual = _first(gluon_bilinear_resize2d(_last(x), align_corners=align, **arguments))
    assert actual.shape == expected.shape
    assert_equivalent(expected, actual)


@settings(max_examples=15, deadline=None)
@given(image=images, scale=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_nearest_upsampling_matches_mxnet(mxnet, image, scale, seed):
    x = _image(seed, *image)
    expected = mxnet.evaluate(f"nd.UpSampling(x, scale={scale}, sample_type='nearest')", {"x": x})
    actual = _first(gluon_upsampling(_last(x), scale=scale, sample_type="nearest"))
    assert_equivalent(expected, actual)


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4), data=st.data(), seed=st.integers(0, 2**16))
def test_slice_matches_mxnet(mxnet, shape, data, seed):
    count = data.draw(st.integers(1, len(shape)))
    begin, end, step = [], [], []
    for size in shape[:count]:
        first = data.draw(st.integers(0, size - 1))
        begin.append(data.draw(st.sampled_from([first, first - size, None])) if first else data.draw(
            st.sampled_from([0, None])))
        end.append(data.draw(st.one_of(st.none(), st.integers(first + 1, size))))
        step.append(data.draw(st.sampled_from([None, 1, 2])))
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    expected = mxnet.evaluate(f"nd.slice(x, begin={tuple(begin)!r}, end={tuple(end)!r}, step={tuple(step)!r})",
                              {"x": x})
    assert_equivalent(expected, np.asarray(gluon_slice(x, tuple(begin), tuple(end), tuple(step))))


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), op=st.sampled_from(["ones_like", "zeros_like"]),
       seed=st.integers(0, 2**16))
def test_ones_and_zeros_like_match_mxnet(mxnet, shape, op, seed):
    from porter.runtime import gluon_nn_ops

    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    expected = mxnet.evaluate(f"nd.{op}(x)", {"x": x})
    assert_equivalent(expected, np.asarray(getattr(gluon_nn_ops, f"gluon_{op}")(x)))


@settings(max_examples=10, deadline=None)
@given(shape=st.tuples(st.integers(2, 5), st.integers(1, 3), st.integers(1, 4)), axes=st.sampled_from([(0,), (1,),
       (0, 2), (2,)]), p=st.sampled_from([0.25, 0.5]), seed=st.integers(0, 2**16))
def test_shared_dropout_keeps_mxnet_semantics(mxnet, shape, axes, p, seed):
    """F.Dropout(axes=...): the masks are random, so what is compared is their law: each kept value scaled by
    1 / (1 - p), dropped ones 0, one mask shared along `axes` (mxnet's, mode='always', and the port's in training),
    and the data unchanged outside training."""
    from porter.runtime.gluon_nn_ops import gluon_shared_dropout

    x = (np.abs(np.random.default_rng(seed).standard_normal(shape)) + 0.5).astype(np.float32)
    expected = mxnet.evaluate(f"nd.Dropout(x, p={p}, axes={axes!r}, mode='always')", {"x": x})
    for result in (np.asarray(expected), np.asarray(gluon_shared_dropout(x, p=p, axes=axes, training=True))):
        scale = result / x
        assert np.all(np.isclose(scale, 0) | np.isclose(scale, 1 / (1 - p)))
        for axis in axes:
            np.testing.assert_allclose(scale, np.broadcast_to(np.take(scale, [0], axis=axis), scale.shape), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(gluon_shared_dropout(x, p=p, axes=axes, training=False)), x)
