"""porter/runtime/tensor_ops.py `tolist`: Tensor.tolist() of what the port computes on the host, a TensorFlow tensor
or a numpy constant (torchvision maxvit's `torch.linspace(...).tolist()` in __init__ is a numpy linspace in the
port), as torch gives it."""

import numpy as np
import tensorflow as tf
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.tensor_ops import tolist


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(0, 3), max_size=3), seed=st.integers(0, 2**16))
def test_tolist_of_tensors_and_numpy_constants_is_torchs(shape, seed):
    values = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    expected = torch.from_numpy(values).tolist()
    assert tolist(tf.constant(values)) == expected
    assert tolist(values) == expected
