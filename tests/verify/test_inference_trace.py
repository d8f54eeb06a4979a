"""porter/verify/harness.py's inference_trace: one trace serves the XLA run and the Transposes count, and counting in
the jit_compile trace gives the plain trace's count (depthwise convolutions, which XLA on a CPU runs as tap sums,
included)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from porter.verify.harness import count_transposes, inference_trace, transposes_in


class Counted:
    """A callable layer stack that counts how often TensorFlow traces it."""

    def __init__(self, channels, multiplier):
        import keras

        from porter.runtime.conv import Conv2d

        self.traces = 0
        self.depthwise = Conv2d(channels, channels * multiplier, 3, padding=1, groups=channels)
        self.pointwise = keras.layers.Dense(4)

    def __call__(self, x, training=False):
        import tensorflow as tf

        self.traces += 0 if tf.executing_eagerly() else 1
        y = tf.transpose(x, [0, 2, 3, 1])  # NCHW -> NHWC, as a port's boundary does
        y = self.depthwise(y)
        return tf.transpose(self.pointwise(y), [0, 3, 1, 2])


@given(channels=st.integers(1, 4), multiplier=st.integers(1, 2), side=st.integers(3, 7))
def test_one_trace_runs_under_xla_and_counts_the_plain_traces_transposes(channels, multiplier, side):
    import tensorflow as tf

    model = Counted(channels, multiplier)
    x = np.random.default_rng(side).standard_normal((1, channels, side, side)).astype("float32")
    eager = np.asarray(model(tf.constant(x)))
    function, trace = inference_trace(model, [x], jit_compile=True)
    assert model.traces == 1
    xla = np.asarray(function(tf.constant(x)))
    assert model.traces == 1  # the call reused the trace the count reads
    assert np.abs(xla - eager).max() <= 1e-4 * max(1.0, float(np.abs(eager).max()))
    assert transposes_in(trace) == count_transposes(model, [x]) == 2


def test_a_count_after_an_xla_run_reads_that_runs_trace():
    """The suite runs a port under XLA, then counts its Transposes on inputs of the same shapes: one trace serves
    both (the model's traces are kept while it lives); other shapes, or another io layout, trace anew."""
    import tensorflow as tf

    model = Counted(2, 1)
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype("float32")
    model(tf.constant(x))  # (built eagerly first, as a port is: a trace creating variables is traced twice)
    inference_trace(model, [x], jit_compile=True)
    assert count_transposes(model, [x]) == 2 and model.traces == 1
    assert inference_trace(model, [x], jit_compile=True)[1] is inference_trace(model, [x], jit_compile=True)[1]
    count_transposes(model, [x[:, :, :4]])
    assert model.traces == 2
    model.channels_last_io = True
    count_transposes(model, [x])
    assert model.traces == 3
