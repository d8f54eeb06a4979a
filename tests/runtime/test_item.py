"""Tensor.item() (porter/runtime/tensor_ops.py `item`): run eagerly, the Python number torch gives, of torch's kind
(a drop-path rate computed in __init__, `[x.item() for x in torch.linspace(0, rate, n)]`, that a layer then tests
as `drop_prob == 0.` when traced: a tensor there stopped timm's TinyViT under tf.function); traced, a scalar tensor
(the value is not known until run time)."""

import numpy as np
import tensorflow as tf
import torch
from hypothesis import given
from hypothesis import strategies as st

from porter.runtime.tensor_ops import item


@given(value=st.one_of(st.floats(-1e6, 1e6, width=32), st.integers(-2**31, 2**31 - 1), st.booleans()),
       shape=st.sampled_from([(), (1,), (1, 1)]))
def test_item_eagerly_is_torchs_python_number(value, shape):
    array = np.full(shape, value, dtype=np.float32 if isinstance(value, float) else bool if isinstance(
        value, bool) else np.int64)
    expected = torch.from_numpy(array).item()
    got = item(tf.constant(array))
    assert type(got) is type(expected) and got == expected


def test_item_traced_is_a_scalar_tensor_a_number_from_init_is_not():
    rates = [item(x) for x in tf.unstack(tf.linspace(0.0, 0.2, 3))]  # (eager: __init__)
    assert all(isinstance(rate, float) for rate in rates) and rates[0] == 0.0

    @tf.function(jit_compile=True)
    def traced(x):
        value = item(tf.reduce_sum(x))
        assert tf.is_tensor(value) and value.shape == ()
        return x * 2.0 if rates[0] == 0.0 else x  # (a Python test of the number: no tensor in a bool)

    np.testing.assert_allclose(traced(tf.ones((2,))).numpy(), [2.0, 2.0])
