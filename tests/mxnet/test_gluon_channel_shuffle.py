"""GluonCV's channel shuffle (`F.reshape(x, shape=(0, -4, groups, -1, -2))`, `F.swapaxes(x, 1, 2)`,
`F.reshape(x, shape=(0, -3, -2))`) on a channels-last image, ported by porter/rules/gluon_shape_ops.py: the port
keeps the image channels-last through it (no Transpose beyond the boundary ones) and matches real mxnet 1.9.1
(one long-lived process, tests/mxnet/mxnet_worker.py) for hypothesis-drawn shapes and groups."""


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


class Shuffle(HybridBlock):
    def __init__(self, groups=2, **kwargs):
        super(Shuffle, self).__init__(**kwargs)
        self.groups = groups
        with self.name_scope():
            self.pool = nn.MaxPool2D(pool_size=1, strides=1)  # no weights; puts the image channels-last

    def channel_shuffle(self, F, data, groups):
        data = F.reshape(data, shape=(0, -4, groups, -1, -2))
        data = F.swapaxes(data, 1, 2)
        data = F.reshape(data, shape=(0, -3, -2))
        return data

    def hybrid_forward(self, F, x):
        x = self.pool(x)
        return self.channel_shuffle(F, data=x, groups=self.groups)
'''
MXNET_SHUFFLE = ("nd.reshape(nd.swapaxes(nd.reshape(x, shape=(0, -4, groups, -1, -2)), 1, 2), "
                 "shape=(0, -3, -2))")


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    return port_gluon_source(tmp_path_factory.mktemp("shuffle"), SOURCE, "shuffle", "--input-shape", "6,4,4")


def test_shuffle_reshapes_the_image_as_it_lies(port):
    _, text = port
    shuffle = text[text.index("def channel_shuffle"):]
    shuffle = shuffle[:shuffle.index("return data")]
    assert shuffle.count("gluon_reshape_in_layout(") == 2
    assert "to_channels_first" not in shuffle and "gluon_reshape(" not in shuffle


@settings(max_examples=15, deadline=None)
@given(batch=st.integers(1, 2), groups=st.integers(1, 4), per_group=st.integers(1, 4), height=st.integers(1, 5),
       width=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_shuffle_matches_mxnet_without_transposes(port, mxnet, batch, groups, per_group, height, width, seed):
    import tensorflow as tf

    module, _ = port
    x = np.random.default_rng(seed).standard_normal((batch, groups * per_group, height, width)).astype(np.float32)
    model = module.Shuffle(groups=groups)
    got = np.asarray(model(tf.constant(x)))
    expected = mxnet.evaluate(MXNET_SHUFFLE, {"x": x}, setup=[f"groups = {groups}"])
    np.testing.assert_array_equal(got, expected)  # a shuffle moves values, it computes none
    xla = tf.function(lambda a: model(a), jit_compile=True)(tf.constant(x))
    np.testing.assert_array_equal(np.asarray(xla), expected)
    if groups > 1 and per_group > 1:  # a split with a size-1 part pairs dims ambiguously: regroup.py transposes
        assert count_transposes(model, [x]) <= 2  # the boundary conversions at most
