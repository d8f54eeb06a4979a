"""Property test against real mxnet 1.9.1 (the worker of tests/mxnet/conftest.py) of the port's F.LeakyReLU
(porter/runtime/gluon_ops.py) for every act_type it maps: leaky and elu with drawn slopes, gelu (exact, as
GluonNLP's BERT uses it) and selu, on hypothesis-drawn shapes and values."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.gluon_ops import gluon_leaky_relu
from porter.verify.compare import assert_equivalent
from tests.mxnet.gluon_fixtures import needs_mxnet

pytestmark = needs_mxnet


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), act_type=st.sampled_from(["leaky", "elu", "gelu",
                                                                                            "selu"]),
       slope=st.sampled_from([0.25, 0.01, 1.5]), seed=st.integers(0, 2**16))
def test_leaky_relu_matches_mxnet(mxnet, shape, act_type, slope, seed):
    x = (np.random.default_rng(seed).standard_normal(shape) * 3).astype(np.float32)
    expected = mxnet.evaluate(f"nd.LeakyReLU(x, act_type={act_type!r}, slope={slope})", {"x": x})
    assert_equivalent(expected, np.asarray(gluon_leaky_relu(x, act_type=act_type, slope=slope)))
