"""The port's Gluon reshape and transpose (porter/runtime/gluon_shape_ops.py) against real mxnet 1.9.1: every special
code of reshape (0, -1, -2, -3, -4, reverse=True) and transpose's axes, including a batch size unknown at trace time."""

import json
import subprocess

import numpy as np
import pytest

from porter.verify.mxnet_reference import mxnet_python
from tests.mxnet.gluon_fixtures import needs_mxnet

RESHAPES = [
    ((2, 3, 4), (0, -1), False), ((2, 3, 4), (-1, 4), False), ((2, 3, 4, 5), (0, -3, 5), False),
    ((2, 3, 4, 5), (-2,), False), ((2, 3, 4, 5), (0, 0, -2), False), ((2, 12, 5), (0, -4, 3, -1, 0), False),
    ((2, 12, 5), (0, -4, -1, 4, -2), False), ((2, 3, 4, 5), (-3, -3), False), ((2, 3, 4), (6, 4), False),
    ((10, 5, 4), (-1, 0), True), ((2, 3, 4), (0, 4, -1), False), ((2, 3, 4, 5), (2, -1, 0), True),
]
TRANSPOSES = [((2, 3, 4), (0, 2, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)), ((2, 3, 4), ())]

MXNET_SCRIPT = """
import json, sys
import mxnet as mx
import numpy as np
cases = json.loads(sys.argv[1])
shapes = [list(mx.nd.zeros(tuple(s)).reshape(tuple(t), reverse=r).shape) for s, t, r in cases["reshape"]]
transposed = [mx.nd.transpose(mx.nd.arange(int(np.prod(s))).reshape(tuple(s)), axes=tuple(a)).asnumpy().ravel()
              .tolist() for s, a in cases["transpose"]]
print(json.dumps({"reshape": shapes, "transpose": transposed}))
"""


@pytest.fixture(scope="module")
def mxnet_results():
    cases = {"reshape": RESHAPES, "transpose": TRANSPOSES}
    completed = subprocess.run([str(mxnet_python()), "-I", "-c", MXNET_SCRIPT, json.dumps(cases)],
                               capture_output=True, text=True, check=True, timeout=300)
    return json.loads(completed.stdout.strip().splitlines()[-1])


@needs_mxnet
@pytest.mark.parametrize("index", range(len(RESHAPES)))
def test_reshape_matches_mxnet(index, mxnet_results):
    import tensorflow as tf

    from porter.runtime.gluon_shape_ops import gluon_reshape

    shape, target, reverse = RESHAPES[index]
    expected = mxnet_results["reshape"][index]
    values = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    assert list(gluon_reshape(values, target, reverse=reverse).shape) == expected
    assert np.array_equal(gluon_reshape(values, *target, reverse=reverse).numpy().ravel(), values.ravel())
    if not reverse:  # batch size unknown at trace time: the same shape once run
        dynamic = tf.function(lambda x: gluon_reshape(x, shape=target),
                              input_signature=[tf.TensorSpec((None,) + shape[1:], tf.float32)])
        assert list(dynamic(values).shape) == expected


@needs_mxnet
@pytest.mark.parametrize("index", range(len(TRANSPOSES)))
def test_transpose_matches_mxnet(index, mxnet_results):
    from porter.runtime.gluon_shape_ops import gluon_transpose

    shape, axes = TRANSPOSES[index]
    values = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    expected = mxnet_results["transpose"][index]
    assert gluon_transpose(values, axes).numpy().ravel().tolist() == expected
    assert gluon_transpose(values, axes=axes).numpy().ravel().tolist() == expected
    if axes:
        assert gluon_transpose(values, *axes).numpy().ravel().tolist() == expected
