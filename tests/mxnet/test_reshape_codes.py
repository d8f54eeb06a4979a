"""mxnet's two reshapes with special codes, as the port runs them (porter/runtime/gluon_shape_ops.py's one code
interpreter: legacy `x.reshape(shape, reverse=...)` and `npx.reshape(a, newshape, reverse=...)`), against real
mxnet 1.9.1 on hypothesis-drawn shapes and code lists, `reverse=True` included.

Codes are drawn by what they do (copy, a size, infer, drop, rest, merge, split) over the input's dims in the order
mxnet reads them (from the right with reverse=True), with awkward ones mixed in: a size that is not the dim's, a
split whose sizes do not make the dim, a drop of a dim that is not 1, codes that stop before the last dim. Where
mxnet refuses the shape the port must refuse it too; where it accepts, the shapes and values must agree, also with
the first dim unknown when the port traces."""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.gluon_numpy_extension import npx_reshape
from porter.runtime.gluon_shape_ops import gluon_reshape
from tests.mxnet.gluon_fixtures import needs_mxnet
from tests.mxnet.mxnet_worker import MxnetError

pytestmark = needs_mxnet

# each dialect's code for what a code does, as mxnet's documentation numbers them
DIALECTS = {
    "legacy": {"copy": 0, "infer": -1, "rest": -2, "merge": -3, "split": -4},
    "npx": {"copy": -2, "infer": -1, "drop": -3, "rest": -4, "merge": -5, "split": -6},
}


@st.composite
def reshapes(draw, dialect, reverse):
    """(input shape, codes as written) for `dialect`."""
    codes_of = DIALECTS[dialect]
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    dims = shape[::-1] if reverse else list(shape)  # the order mxnet reads them in
    read, source, inferred = [], 0, False
    while source < len(dims) and draw(st.integers(0, 5)) > 0:  # sometimes stop before the last dim
        size = dims[source]
        kinds = ["copy", "size", "split", "rest"] + ["merge"] * (source + 1 < len(dims))
        kinds += ["infer"] * (not inferred) + ["drop"] * ("drop" in codes_of)
        kind = draw(st.sampled_from(kinds))
        if kind == "size":
            read.append(draw(st.one_of(st.just(size), st.integers(1, 4))))
        elif kind == "split":
            factor = draw(st.sampled_from([f for f in range(1, size + 1) if size % f == 0]))
            pair = draw(st.sampled_from([(factor, -1), (-1, factor), (factor, size // factor), (size + 1, 1)]))
            read.extend([codes_of["split"], *pair])
        else:
            read.append(codes_of[kind])
        inferred = inferred or kind == "infer"
        source += {"merge": 2, "rest": len(dims) - source}.get(kind, 1)
    return shape, tuple(read[::-1] if reverse else read)


def _mxnet_shape(mxnet, dialect, values, codes, reverse):
    if dialect == "npx":
        setup = ["from mxnet import np, npx", "npx.set_np()", "a = a.as_np_ndarray()"]
        expression = f"npx.reshape(a, {codes}, reverse={reverse})"
    else:
        setup = ["from mxnet import npx", "npx.reset_np()"]
        expression = f"a.reshape({codes}, reverse={reverse})"
    return mxnet.evaluate(expression, {"a": values}, setup=setup)


PORTS = {"legacy": lambda x, codes, reverse: gluon_reshape(x, codes, reverse=reverse),
         "npx": lambda x, codes, reverse: npx_reshape(x, codes, reverse=reverse)}


def _check(mxnet, dialect, shape, codes, reverse):
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    port = PORTS[dialect]
    try:
        expected = _mxnet_shape(mxnet, dialect, values, codes, reverse)
    except MxnetError:
        with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
            port(values, codes, reverse)
        return
    got = port(values, codes, reverse).numpy()
    assert got.shape == expected.shape, (shape, codes, reverse)
    assert np.array_equal(got, expected)
    unknown_batch = tf.function(lambda x: port(x, codes, reverse),
                                input_signature=[tf.TensorSpec((None, *shape[1:]), tf.float32)])
    assert unknown_batch(values).shape == expected.shape, (shape, codes, reverse, "unknown first dim")


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dialect", sorted(DIALECTS))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_reshape_codes_match_mxnet(mxnet, dialect, reverse, data):
    shape, codes = data.draw(reshapes(dialect, reverse))
    _check(mxnet, dialect, shape, codes, reverse)


@pytest.mark.parametrize("dialect, shape, codes", [
    ("legacy", (2, 12, 5), (3, -1, -4, 0)), ("legacy", (10, 5, 4), (-1, 0)), ("legacy", (2, 3, 4, 5), (-2, -3, 0)),
    ("npx", (2, 12, 5), (-2, 4, -1, -6)), ("npx", (2, 3, 1, 5), (-4, -3, -2)), ("npx", (2, 3, 4, 1), (-1, -3)),
])
def test_reverse_reads_codes_from_the_right(mxnet, dialect, shape, codes):
    """reverse=True: a split's sizes stand before its code; -1 and copies align with the last dims."""
    _check(mxnet, dialect, shape, codes, True)
