"""GluonCV ResNeSt's split attention on a channels-last image (`F.reshape(x.expand_dims(1), (0, radix, channels, 0,
0))`, `F.sum(..., axis=1)` over the radix axis, `reshape((0, cardinality, radix, -1)).swapaxes(1, 2)`, a softmax over
the radix axis, `F.broadcast_mul` of the per-group weights): the port keeps the image where it lies (the radix axis
stored after the spatial axes, no Transpose beyond the boundary's) and matches real mxnet 1.9.1 (one long-lived
process, tests/mxnet/mxnet_worker.py) for hypothesis-drawn shapes, radix and cardinality."""


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


class SplitAttention(HybridBlock):
    def __init__(self, channels, radix=2, cardinality=1, **kwargs):
        super(SplitAttention, self).__init__(**kwargs)
        self.radix = radix
        self.cardinality = cardinality
        self.channels = channels
        with self.name_scope():
            self.pool = nn.MaxPool2D(pool_size=1, strides=1)  # no weights; puts the image channels-last

    def hybrid_forward(self, F, x):
        x = self.pool(x)
        splited = F.reshape(x.expand_dims(1), (0, self.radix, self.channels, 0, 0))
        gap = F.sum(splited, axis=1)
        atten = F.mean(x, axis=(2, 3), keepdims=True)
        atten = atten.reshape((0, self.cardinality, self.radix, -1)).swapaxes(1, 2)
        atten = F.softmax(atten, axis=1).reshape((0, self.radix, -1, 1, 1))
        out = F.sum(F.broadcast_mul(atten, splited), axis=1)
        return out + gap
'''
MXNET = '''
def split_attention(x, radix, cardinality, channels):
    splited = nd.reshape(x.expand_dims(1), (0, radix, channels, 0, 0))
    gap = nd.sum(splited, axis=1)
    atten = nd.mean(x, axis=(2, 3), keepdims=True).reshape((0, cardinality, radix, -1)).swapaxes(1, 2)
    atten = nd.softmax(atten, axis=1).reshape((0, radix, -1, 1, 1))
    return nd.sum(nd.broadcast_mul(atten, splited), axis=1) + gap
'''


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    return port_gluon_source(tmp_path_factory.mktemp("split_attention"), SOURCE, "split_attention", "--input-shape", "8,4,4", "--init-args",
                             '{"channels": 4}')


def test_the_radix_axis_is_split_off_as_the_image_lies(port):
    _, text = port
    body = text[text.index("def call"):]
    assert "splited=gluon_reshape_in_layout(tf.expand_dims(x,3)" in "".join(body.split())
    assert "to_channels_first(x)" not in body  # (only the (N, R*C, 1, 1) weights go to mxnet's order: a reshape)


@settings(max_examples=12, deadline=None)
@given(batch=st.integers(1, 2), radix=st.integers(1, 3), cardinality=st.integers(1, 2), per_group=st.integers(1, 3),
       height=st.integers(1, 5), width=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_split_attention_matches_mxnet_without_transposes(port, mxnet, batch, radix, cardinality, per_group,
                                                          height, width, seed):
    import tensorflow as tf

    module, _ = port
    channels = cardinality * per_group
    x = np.random.default_rng(seed).standard_normal((batch, radix * channels, height, width)).astype(np.float32)
    model = module.SplitAttention(channels, radix=radix, cardinality=cardinality)
    expected = mxnet.evaluate(f"split_attention(x, {radix}, {cardinality}, {channels})", {"x": x}, setup=[MXNET])
    np.testing.assert_allclose(np.asarray(model(tf.constant(x))), expected, rtol=1e-5, atol=1e-5)
    xla = tf.function(lambda a: model(a), jit_compile=True)(tf.constant(x))
    np.testing.assert_allclose(np.asarray(xla), expected, rtol=1e-5, atol=1e-5)
    if cardinality == 1 and radix > 1 and channels > 1:  # (a size-1 part pairs dims ambiguously: regroup.py
        assert count_transposes(model, [x]) <= 2  # transposes; cardinality > 1 swaps data, as mxnet does)
