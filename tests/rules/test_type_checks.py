"""`torch.is_tensor` (porter/rules/type_checks.py, runtime porter/runtime/type_checks.py): the runtime answers as
torch does for tensors, variables and plain values; a ported module that splits a tensor it is handed when
`is_tensor(x)` (vit-pytorch's Specialized, imported `from torch import is_tensor`) matches torch."""

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input


@settings(max_examples=20, deadline=None)
@given(kind=st.sampled_from(["tensor", "variable", "list", "int", "float", "none", "array"]),
       size=st.integers(1, 4))
def test_is_tensor_runtime_matches_torch(kind, size):
    import keras
    import tensorflow as tf
    import torch

    from porter.runtime.type_checks import torch_is_tensor

    data = np.arange(size, dtype="float32")
    ours = {"tensor": tf.constant(data), "variable": keras.Variable(data), "list": [1.0] * size, "int": size,
            "float": float(size), "none": None, "array": data}[kind]
    theirs = {"tensor": torch.tensor(data), "variable": torch.nn.Parameter(torch.tensor(data)),
              "list": [1.0] * size, "int": size, "float": float(size), "none": None, "array": data}[kind]
    assert torch_is_tensor(ours) == torch.is_tensor(theirs)


SPLITTER = '''
import torch
from torch import nn, is_tensor


class Specialized(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.fns = nn.ModuleList([nn.LayerNorm(dim), nn.Linear(dim, dim)])

    def forward(self, x, token_lens=(1, 3)):
        if is_tensor(x):
            x = x.split(token_lens, dim=1)
        out = tuple(fn(t) for fn, t in zip(self.fns, x))
        if torch.is_tensor(out):
            return out
        return torch.cat(out, dim=1)
'''


@pytest.fixture(scope="module")
def splitter(tmp_path_factory):
    return port(tmp_path_factory.mktemp("is_tensor"), textwrap.dedent(SPLITTER), input_specs=("4,4",))


@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_is_tensor_branch_matches_torch(splitter, batch, seed):
    x = random_input(seed, (batch, 4, 4))
    assert_same_outputs(splitter, [x], tolerance=1e-5, what="is_tensor split")
    assert_same_outputs(splitter, [x], tolerance=1e-5, what="is_tensor split, XLA", jit=True)
