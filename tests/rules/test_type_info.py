"""torch.finfo / torch.iinfo (rules/type_info.py, runtime/type_info.py): every attribute equals torch's, for each
dtype torch and the port share, given as a dtype constant or a tensor's dtype, and inside a model that uses them."""

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.type_info import finfo, iinfo
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_equals_torch(name):
    import tensorflow as tf
    import torch

    expected = torch.finfo(getattr(torch, name))
    for given_as in (getattr(tf, name), tf.zeros([1], getattr(tf, name)).dtype):
        actual = finfo(given_as)
        for attribute in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
            assert getattr(actual, attribute) == getattr(expected, attribute), (name, attribute)
    assert vars(finfo()) == vars(finfo(tf.float32))  # torch.finfo(): the default dtype


@pytest.mark.parametrize("name", INTS)
def test_iinfo_equals_torch(name):
    import tensorflow as tf
    import torch

    expected, actual = torch.iinfo(getattr(torch, name)), iinfo(getattr(tf, name))
    assert (actual.bits, actual.max, actual.min) == (expected.bits, expected.max, expected.min)


SOURCE = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 3)

    def forward(self, x):
        y = self.fc(x)
        y = y.clamp(min=torch.finfo(y.dtype).min / 2, max=torch.finfo(torch.float32).max / 2)
        return y / (y.abs().sum(-1, keepdim=True) + torch.finfo(y.dtype).eps) + torch.iinfo(torch.int8).max
'''


@pytest.fixture(scope="module")
def type_info_port(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(SOURCE), input_specs=("5",)))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 4), seed=st.integers(0, 2**16), scale=st.sampled_from([1e-30, 1.0, 1e30]))
def test_type_info_in_a_model_matches_torch(type_info_port, batch, seed, scale):
    pair = type_info_port("net")
    assert_same_outputs(pair, [random_input(seed, (batch, 5), scale)], tolerance=1e-6, what="finfo/iinfo")
    assert np.isfinite(pair.run_keras([random_input(seed, (batch, 5), scale)])[0]).all()
