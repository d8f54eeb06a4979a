"""Property tests against real mxnet 1.9.1 (one long-lived mxnet process, tests/mxnet/mxnet_worker.py) of the
volumetric Gluon layers GluonCV's video networks (C3D, I3D, R(2+1)D, P3D) build: gluon.nn.Conv3D (kernel, strides,
padding, dilation, groups, bias, activation; its OIDHW weight loaded as save_parameters writes it), Max/AvgPool3D
(ceil_mode, count_include_pad; a ceil_mode window past the input, which mxnet keeps and torch drops, is refused)
and GlobalAvg/MaxPool3D, and F.squeeze (porter/runtime/gluon_shape_ops.py). The
port's layers take channels-last videos (N, D, H, W, C); mxnet sees its own (N, C, D, H, W)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.compare import assert_equivalent
from tests.mxnet.gluon_fixtures import needs_mxnet

pytestmark = needs_mxnet


def _video(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _last(x):
    return np.transpose(x, (0, 2, 3, 4, 1))


def _first(y):
    return np.transpose(np.asarray(y), (0, 4, 1, 2, 3))


triples = st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))


@settings(max_examples=25, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_conv3d_matches_mxnet(mxnet, data, seed):
    from porter.runtime.gluon_layers import GluonConv3D

    groups = data.draw(st.sampled_from([1, 2]))
    in_channels, channels = groups * data.draw(st.integers(1, 2)), groups * data.draw(st.integers(1, 3))
    kernel, strides, dilation = data.draw(triples), data.draw(triples), data.draw(st.sampled_from([(1, 1, 1), (1, 2, 1)]))
    padding = tuple(data.draw(st.integers(0, k // 2 + 1)) for k in kernel)
    size = tuple(data.draw(st.integers((k - 1) * d + 1, 7)) for k, d in zip(kernel, dilation))
    use_bias, activation = data.draw(st.booleans()), data.draw(st.sampled_from([None, "relu", "tanh"]))
    x = _video(seed, (data.draw(st.integers(1, 2)), in_channels) + size)
    weight = _video(seed + 1, (channels, in_channels // groups) + kernel)
    bias = _video(seed + 2, (channels,))
    arguments = f"{channels}, {kernel}, strides={strides}, padding={padding}, dilation={dilation}, groups={groups}, " \
                f"use_bias={use_bias}, activation={activation!r}, in_channels={in_channels}"
    setup = [f"layer = mx.gluon.nn.Conv3D({arguments})", "layer.initialize()", "layer.weight.set_data(weight)"]
    if use_bias:
        setup.append("layer.bias.set_data(bias)")
    expected = mxnet.evaluate("layer(x)", {"x": x, "weight": weight, "bias": bias}, setup=setup)
    layer = GluonConv3D(channels, kernel, strides=strides, padding=padding, dilation=dilation, groups=groups,
                        use_bias=use_bias, activation=activation, in_channels=in_channels)
    for entry in layer.torch_state():
        value = {"weight": weight, "bias": bias}[entry.key]
        entry.variable.assign(entry.to_keras(value) if entry.to_keras else value)
    assert_equivalent(expected, _first(layer(_last(x))))


@settings(max_examples=30, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_pool3d_matches_mxnet(mxnet, data, seed):
    from porter.runtime import gluon_layers

    kind = data.draw(st.sampled_from(["MaxPool3D", "AvgPool3D", "GlobalAvgPool3D", "GlobalMaxPool3D"]))
    size = data.draw(st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6)))
    x = _video(seed, (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 3))) + size)
    if kind.startswith("Global"):
        text, keras_layer = "", getattr(gluon_layers, f"Gluon{kind}")()
    else:
        pool = tuple(data.draw(st.integers(1, min(n, 3))) for n in size)
        strides = data.draw(st.one_of(st.none(), triples))
        padding = tuple(data.draw(st.integers(0, k // 2)) for k in pool)
        ceil_mode = data.draw(st.booleans())
        include = data.draw(st.booleans())
        kwargs = {"pool_size": pool, "strides": strides, "padding": padding, "ceil_mode": ceil_mode}
        if kind == "AvgPool3D":
            kwargs["count_include_pad"] = include
        text = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        keras_layer = getattr(gluon_layers, f"Gluon{kind}")(**kwargs)
    expected = mxnet.evaluate(f"mx.gluon.nn.{kind}({text})(x)", {"x": x})
    if not kind.startswith("Global") and ceil_mode and any(
            (-(-(n + 2 * p - k) // s)) * s >= n + p for n, k, s, p in zip(size, pool, strides or pool, padding)):
        with pytest.raises(NotImplementedError):  # a last window past the input, which mxnet keeps: refused
            keras_layer(_last(x))
        return
    assert_equivalent(expected, _first(keras_layer(_last(x))))


@settings(max_examples=30, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_squeeze_matches_mxnet(mxnet, data, seed):
    from porter.runtime.gluon_shape_ops import gluon_squeeze

    shape = data.draw(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=1, max_size=5))
    ones = [i for i, n in enumerate(shape) if n == 1]
    if ones and data.draw(st.booleans()):
        picked = data.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
        axis = [a - len(shape) if data.draw(st.booleans()) else a for a in picked]
        axis = axis[0] if len(axis) == 1 and data.draw(st.booleans()) else tuple(axis)
    else:
        axis = None
    x = _video(seed, tuple(shape))
    expected = mxnet.evaluate(f"nd.squeeze(x, axis={axis!r})", {"x": x})
    actual = np.asarray(gluon_squeeze(x, axis=axis))
    assert actual.shape == expected.shape
    np.testing.assert_array_equal(actual, expected)


VIDEO_NET = '''
import mxnet as mx
from mxnet import autograd
from mxnet.gluon import nn


class TinyVideoNet(nn.HybridBlock):
    def __init__(self, classes=3, ctx=mx.cpu(), **kwargs):
        super().__init__(**kwargs)
        self.conv = nn.Conv3D(4, kernel_size=(1, 3, 3), padding=(0, 1, 1), strides=(1, 2, 2))
        self.bn = nn.BatchNorm()
        self.pool = nn.MaxPool3D(pool_size=(2, 1, 1), strides=(2, 1, 1))
        self.avg = nn.GlobalAvgPool3D()
        self.fc = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        x = self.pool(F.relu(self.bn(self.conv(x))))
        if not autograd.is_training():  # GluonCV's DropBlock: the identity outside training
            x = x * 2
        x = F.squeeze(self.avg(x), axis=(2, 3, 4))
        return self.fc(x)
'''


def test_video_net_port_keeps_its_layout_and_matches_mxnet(tmp_path):
    """The rules together: Conv3D/3D pools channels-last, F.squeeze of the pooled (N, 1, 1, 1, C) features removing
    the axes where they lie (no Transpose), `autograd.is_training()` as `training`, `ctx=mx.cpu()` as None."""
    import importlib.util
    import subprocess
    import sys

    import tensorflow as tf

    from porter.verify.harness import count_transposes
    from porter.verify.mxnet_reference import run_gluon_reference
    from porter.weights.gluon_params import read_gluon_params

    source = tmp_path / "video.py"
    source.write_text(VIDEO_NET)
    completed = subprocess.run([sys.executable, "-m", "porter", "convert", str(source), "-o", str(tmp_path / "out")],
                               capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    text = (tmp_path / "out" / "video_keras.py").read_text()
    assert "gluon_squeeze(self.avg(x), axis=(1, 2, 3))" in text and "if not bool(training):" in text
    assert "ctx=None" in text
    spec = importlib.util.spec_from_file_location("video_keras", tmp_path / "out" / "video_keras.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = _video(0, (2, 3, 4, 8, 8))
    reference = run_gluon_reference(source, "TinyVideoNet", [x], perturb=True, save_parameters=tmp_path / "v.params")
    model = module.TinyVideoNet()
    model(tf.constant(x))
    module.load_state_dict(model, read_gluon_params(tmp_path / "v.params"))
    assert_equivalent(reference.outputs[0], np.asarray(model(tf.constant(x), training=False)))
    assert count_transposes(model, [x]) <= 1  # the input's conversion only
