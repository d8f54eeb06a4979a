"""torch's dtype questions on the port's dtypes (rules/dtype_properties.py, runtime `dtype_property`, `tensor_to`):
`is_floating_point` / `is_complex` / `is_signed` / `element_size` of a tensor, a dtype's own properties read where the
dtype is known only at run time (timm's `_freq_buffer_dtype`) or decided from a torch constant, and `x.to(target)`
with a target porter cannot type (a dtype casts, None or a device keeps) equal torch's."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.rules.dtype_properties import DTYPE_FACTS, constant_dtype_property
from porter.runtime.type_info import dtype_property
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

SHARED = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64", "complex128"]


@pytest.mark.parametrize("name", SHARED)
def test_dtype_properties_equal_torch(name):
    import tensorflow as tf
    import torch

    expected = getattr(torch, name)
    for given_as in (getattr(tf, name), tf.zeros([1], getattr(tf, name)).dtype):
        for prop in ("is_floating_point", "is_complex", "is_signed", "itemsize"):
            assert dtype_property(given_as, prop) == getattr(expected, prop), (name, prop)


@pytest.mark.parametrize("alias", sorted(DTYPE_FACTS))
def test_constant_dtype_properties_equal_torch(alias):
    import torch

    for prop in ("is_floating_point", "is_complex", "is_signed", "itemsize"):
        assert constant_dtype_property(f"torch.{alias}.{prop}") == getattr(getattr(torch, alias), prop), (alias, prop)
    assert constant_dtype_property(f"torch.{alias}.name") is None
    assert constant_dtype_property("torch.nn.is_signed") is None


def test_other_objects_keep_their_own_attribute():
    class Holder:
        itemsize = 7

    assert dtype_property(Holder(), "itemsize") == 7


SOURCE = '''
import torch
import torch.nn as nn


def buffer_dtype(dtype=None):
    """timm's _freq_buffer_dtype: kept at float32 or wider."""
    if dtype is None:
        dtype = torch.get_default_dtype()
    if dtype.is_floating_point and torch.finfo(dtype).bits < 32:
        return torch.float32
    return dtype


class Net(nn.Module):
    def __init__(self, dtype=DTYPE, device=None):
        super().__init__()
        self.fc = nn.Linear(5, 3)
        self.dtype = dtype
        self.device = device
        self.kept = buffer_dtype(dtype)
        self.width = torch.float16.itemsize + torch.int8.is_signed + torch.uint8.is_signed

    def forward(self, x):
        y = self.fc(x)
        if x.is_floating_point() and not torch.is_complex(y) and y.is_signed():
            y = y * 2 + y.element_size()
        if self.dtype is not None and self.dtype.is_floating_point:
            y = y + self.dtype.itemsize
        z = y.to(self.dtype).to(self.device).to(device=self.device, dtype=self.dtype)
        w = y.to(device=self.device, dtype=self.kept)
        return z.to(torch.float32) * self.width, w.to(x.dtype), (x > 0).to(self.dtype)
'''
DTYPES = {"none": "None", "float64": "torch.float64", "float16": "torch.float16", "int32": "torch.int32"}


@pytest.fixture(scope="module")
def dtype_ports(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name),
                                    textwrap.dedent(SOURCE).replace("DTYPE", DTYPES[name]), input_specs=("5",)))


@settings(max_examples=8, deadline=None)
@given(name=st.sampled_from(sorted(DTYPES)), batch=st.integers(1, 4), seed=st.integers(0, 2**16),
       scale=st.sampled_from([1e-3, 1.0, 30.0]))
def test_dtype_questions_in_a_model_match_torch(dtype_ports, name, batch, seed, scale):
    pair = dtype_ports(name)
    tolerance = 1e-3 if name == "float16" else 1e-6
    assert_same_outputs(pair, [random_input(seed, (batch, 5), scale)], tolerance=tolerance, what=f"dtype {name}")
