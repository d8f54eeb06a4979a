"""Gluon reshapes that keep a clip's channels whole around a 2D stage (porter/rules/gluon_shape_ops.py): the time
axis folded into the batch (`F.swapaxes(x, 1, 2)` then `(-3, -2)`) and unfolded back (`(-4, -1, frames, -2)`), P3D's
`(-1, 0, 1, 0, 0)` + squeeze of a time axis of size 1, and a size-1 axis split off the height by
`(0, 0, -4, 1, -1, -2)`. The port keeps the clip channels-last through them (no Transpose beyond the boundary ones)
and matches the same blocks run by real mxnet 1.9.1 (one long-lived process, tests/mxnet/mxnet_worker.py) for
hypothesis-drawn shapes, batch 1 and odd sizes included."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.mxnet.gluon_fixtures import needs_mxnet, port_gluon_source

pytestmark = needs_mxnet

SOURCE = '''
from mxnet.gluon import nn
from mxnet.gluon.nn import HybridBlock


class TimeFold(HybridBlock):
    """(N, C, T, H, W) -> a 2D stage over N*T frames -> (N, C, T, H, W)."""

    def __init__(self, frames=2, **kwargs):
        super(TimeFold, self).__init__(**kwargs)
        self.frames = frames
        with self.name_scope():
            self.pool3d = nn.MaxPool3D(pool_size=1, strides=1)  # no weights; they put the clip channels-last
            self.pool2d = nn.MaxPool2D(pool_size=1, strides=1)

    def hybrid_forward(self, F, x):
        x = self.pool3d(x)
        x = F.swapaxes(x, 1, 2)
        x = F.reshape(x, (-3, -2))
        x = self.pool2d(x)
        x = F.reshape(x, (-4, -1, self.frames, -2))
        x = F.swapaxes(x, 1, 2)
        return self.pool3d(x)


class SqueezeTime(HybridBlock):
    """P3D's way into its 2D stage: the time axis (of size 1 there) folded into the batch and squeezed."""

    def __init__(self, **kwargs):
        super(SqueezeTime, self).__init__(**kwargs)
        with self.name_scope():
            self.pool3d = nn.MaxPool3D(pool_size=1, strides=1)
            self.pool2d = nn.MaxPool2D(pool_size=1, strides=1)

    def hybrid_forward(self, F, x):
        x = self.pool3d(x)
        x = F.reshape(x, (-1, 0, 1, 0, 0))
        x = F.squeeze(x, axis=2)
        return self.pool2d(x)


class InsertTime(HybridBlock):
    """An image given a time axis of size 1 for a 3D stage."""

    def __init__(self, **kwargs):
        super(InsertTime, self).__init__(**kwargs)
        with self.name_scope():
            self.pool3d = nn.MaxPool3D(pool_size=1, strides=1)
            self.pool2d = nn.MaxPool2D(pool_size=1, strides=1)

    def hybrid_forward(self, F, x):
        x = self.pool2d(x)
        x = F.reshape(x, (0, 0, -4, 1, -1, -2))
        return self.pool3d(x)
'''


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    return port_gluon_source(tmp_path_factory.mktemp("time_fold"), SOURCE, "time_fold", "--class", "TimeFold",
                             "--input-shape", "3,2,4,4")


def _body(text, name):
    body = text[text.index(f"class {name}"):]
    return body[body.index("def call"):body.index("return ")]


def test_reshapes_keep_the_clip_as_it_lies(port):
    _, text = port
    for name in ("TimeFold", "SqueezeTime", "InsertTime"):
        body = _body(text, name)
        assert "gluon_reshape_in_layout(" in body, name
        assert "to_channels_first" not in body and "gluon_reshape(" not in body, name


def _matches(module, mxnet, name, x, setup, build):
    import tensorflow as tf

    model = build(getattr(module, name))
    expected = mxnet.evaluate("net(x)", {"x": x}, setup=[SOURCE, f"net = {setup}", "net.initialize()"])
    np.testing.assert_array_equal(np.asarray(model(tf.constant(x))), expected)  # reshapes move values only
    xla = tf.function(lambda a: model(a), jit_compile=True)(tf.constant(x))
    np.testing.assert_array_equal(np.asarray(xla), expected)
    return count_transposes(model, [x])


sizes = st.integers(1, 5)


@settings(max_examples=12, deadline=None)
@given(batch=st.integers(1, 3), channels=sizes, frames=st.integers(1, 3), height=sizes, width=sizes,
       seed=st.integers(0, 2**16))
def test_time_fold_matches_mxnet_without_transposes(port, mxnet, batch, channels, frames, height, width, seed):
    module, _ = port
    x = np.random.default_rng(seed).standard_normal((batch, channels, frames, height, width)).astype(np.float32)
    transposes = _matches(module, mxnet, "TimeFold", x, f"TimeFold(frames={frames})",
                          lambda cls: cls(frames=frames))
    assert transposes <= 2  # the boundary conversions at most


@settings(max_examples=12, deadline=None)
@given(batch=st.integers(1, 3), channels=sizes, frames=st.integers(1, 3), height=sizes, width=sizes,
       seed=st.integers(0, 2**16))
def test_squeezed_time_matches_mxnet(port, mxnet, batch, channels, frames, height, width, seed):
    module, _ = port
    x = np.random.default_rng(seed).standard_normal((batch, channels, frames, height, width)).astype(np.float32)
    transposes = _matches(module, mxnet, "SqueezeTime", x, "SqueezeTime()", lambda cls: cls())
    if frames == 1:  # more frames: (-1, 0, 1, 0, 0) mixes time into the channels (Gluon's order), exact through
        assert transposes <= 2  # a transpose


@settings(max_examples=12, deadline=None)
@given(batch=st.integers(1, 3), channels=sizes, height=sizes, width=sizes, seed=st.integers(0, 2**16))
def test_inserted_time_matches_mxnet_without_transposes(port, mxnet, batch, channels, height, width, seed):
    module, _ = port
    x = np.random.default_rng(seed).standard_normal((batch, channels, height, width)).astype(np.float32)
    assert _matches(module, mxnet, "InsertTime", x, "InsertTime()", lambda cls: cls()) <= 2
