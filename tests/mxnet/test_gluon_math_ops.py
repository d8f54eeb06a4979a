"""The port's Gluon batch_dot/dot, broadcast_*, expand_dims, split, repeat, SequenceMask, one_hot and where
(porter/runtime/gluon_math_ops.py) against real mxnet 1.9.1 on the same random inputs."""

import subprocess

import numpy as np
import pytest

from porter.verify.mxnet_reference import mxnet_python
from tests.mxnet.gluon_fixtures import needs_mxnet

# name -> (mxnet expression over the arrays a, b, c, lengths; the port's call, same arguments)
CASES = {
    "batch_dot": "nd.batch_dot(a, b)",
    "batch_dot_transpose_b": "nd.batch_dot(a, c, transpose_b=True)",
    "batch_dot_transpose_a": "nd.batch_dot(c, a, transpose_a=True)",
    "dot_2d_transpose_b": "nd.dot(a, w, transpose_b=True)",
    "dot_nd": "nd.dot(a, b[0])",
    "broadcast_add": "nd.broadcast_add(a, g)",
    "broadcast_sub": "nd.broadcast_sub(a, g)",
    "broadcast_mul": "nd.broadcast_mul(a, g)",
    "broadcast_div": "nd.broadcast_div(a, g + 3)",
    "broadcast_maximum": "nd.broadcast_maximum(a, g)",
    "broadcast_minimum": "nd.broadcast_minimum(a, g)",
    "expand_dims": "nd.expand_dims(a, axis=1)",
    "expand_dims_last": "nd.expand_dims(a, axis=-1)",
    "split": "nd.split(s, num_outputs=3, axis=1)[1]",
    "split_squeeze": "nd.split(s, num_outputs=6, axis=1, squeeze_axis=True)[4]",
    "repeat_flat": "nd.repeat(lengths, repeats=2)",
    "repeat_axis": "nd.repeat(a, repeats=3, axis=1)",
    "sequence_mask_axis0": "nd.SequenceMask(t, sequence_length=lengths, use_sequence_length=True, value=-1e9)",
    "sequence_mask_axis1": "nd.SequenceMask(a, sequence_length=lengths, use_sequence_length=True, value=2.0, axis=1)",
    "sequence_mask_off": "nd.SequenceMask(a)",
    "one_hot": "nd.one_hot(lengths, 6)",
    "one_hot_out_of_range": "nd.one_hot(lengths, 4, on_value=2.5, off_value=-1.0)",
    "one_hot_tokens": "nd.one_hot(tokens, 7, dtype='float64')",
    "where": "nd.where(a > 0, a, c)",
    "where_numbers": "nd.where(nd.round(c), a, -1e4 * nd.ones_like(a))",
    "where_rows": "nd.where(lengths > 2, a, c)",
}
PORT = {name: expression.replace("nd.", "gluon_", 1).replace("gluon_SequenceMask", "gluon_sequence_mask")
        .replace("nd.round", "tf.round").replace("nd.ones_like", "tf.ones_like") for name, expression in CASES.items()}


def _arrays():
    generator = np.random.default_rng(3)
    return {"a": generator.standard_normal((4, 5, 6)).astype(np.float32),
            "b": generator.standard_normal((4, 6, 3)).astype(np.float32),
            "c": generator.standard_normal((4, 5, 6)).astype(np.float32),
            "w": generator.standard_normal((7, 6)).astype(np.float32),
            "g": generator.standard_normal((1, 5, 1)).astype(np.float32),
            "s": generator.standard_normal((2, 6, 4)).astype(np.float32),
            "t": generator.standard_normal((5, 4, 3)).astype(np.float32),
            "lengths": np.array([5, 2, 1, 4], dtype=np.float32),
            "tokens": generator.integers(-1, 8, (3, 5)).astype(np.int32)}


MXNET_SCRIPT = """
import sys
import numpy as np
import mxnet as mx
from mxnet import nd
arrays = dict(np.load(sys.argv[1]))
names = sys.argv[3].split(",")
expressions = sys.argv[4].split(";")
env = {k: nd.array(v, dtype=v.dtype) for k, v in arrays.items()}
env["nd"] = nd
np.savez(sys.argv[2], **{n: eval(e, env).asnumpy() for n, e in zip(names, expressions)})
"""


@pytest.fixture(scope="module")
def mxnet_outputs(tmp_path_factory):
    scratch = tmp_path_factory.mktemp("gluon-math")
    np.savez(scratch / "in.npz", **_arrays())
    names = sorted(CASES)
    subprocess.run([str(mxnet_python()), "-I", "-c", MXNET_SCRIPT, str(scratch / "in.npz"), str(scratch / "out.npz"),
                    ",".join(names), ";".join(CASES[n] for n in names)], check=True, capture_output=True, timeout=300)
    with np.load(scratch / "out.npz") as archive:
        return {name: archive[name] for name in archive.files}


@needs_mxnet
@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_mxnet(name, mxnet_outputs):
    import tensorflow as tf

    from porter.runtime import gluon_math_ops

    env = {k: tf.constant(v) for k, v in _arrays().items()}
    env.update({k: getattr(gluon_math_ops, k) for k in dir(gluon_math_ops) if k.startswith("gluon_")}, tf=tf)
    actual = np.asarray(eval(PORT[name], env))
    expected = mxnet_outputs[name]
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)
