"""`nn.init._calculate_fan_in_and_fan_out` (rules/init_fans.py) gives torch's fans for hypothesis-drawn weight
shapes (a Linear's (out, in), a conv's (out, in/groups, *kernel)), and refuses a vector as torch does."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=2, max_size=5))
def test_fans_match_torch(shape):
    import tensorflow as tf
    import torch

    from porter.runtime.init_fans import calculate_fan_in_and_fan_out

    expected = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    assert calculate_fan_in_and_fan_out(tf.Variable(np.zeros(shape, np.float32))) == expected


def test_fans_of_a_vector_raise_as_torch():
    from porter.runtime.init_fans import calculate_fan_in_and_fan_out

    with pytest.raises(ValueError):
        calculate_fan_in_and_fan_out(np.zeros(4, np.float32))
