"""`Tensor.stride` / `Tensor.as_strided` read as torch's contiguous tensor of the same shape (HDemucs frames a
padded signal with them), float math functions on integer tensors (`torch.arange(1, n + 1).sqrt()`: torch computes
in float32, TensorFlow refused), and `p.data /= s` / `p.data = t` in a constructor or reset function (Keras
variables have no `.data`: the port failed to build). Checked against torch with drawn sizes."""

import numpy as np
import pytest
import tensorflow as tf
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.strides import as_strided, tensor_stride
from porter.verify.harness import PortedPair
from tests.passes.snippet_ports import assert_matches_torch, snippet_ports


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), frames=st.integers(1, 4),
       kernel=st.integers(1, 4), step=st.integers(1, 3), offset=st.integers(0, 2), seed=st.integers(0, 2 ** 16))
def test_as_strided_frames_match_torch(shape, frames, kernel, step, offset, seed):
    length = offset + (frames - 1) * step + kernel
    full = list(shape) + [length]
    x = np.random.default_rng(seed).standard_normal(full).astype(np.float32)
    t = torch.from_numpy(x)
    assert tensor_stride(tf.constant(x)) == t.stride()
    strides = list(t.stride()[:-1]) + [step, 1]
    size = list(shape) + [frames, kernel]
    expected = t.as_strided(size, strides, offset).numpy()
    np.testing.assert_array_equal(as_strided(tf.constant(x), size, strides, offset).numpy(), expected)


SOURCE = '''
import math
import torch
import torch.nn as nn
import torch.nn.functional as F


def frames_of(a, kernel_size, stride):
    shape = list(a.shape[:-1])
    length = int(a.shape[-1])
    n_frames = math.ceil(length / stride)
    a = F.pad(input=a, pad=[0, (n_frames - 1) * stride + kernel_size - length])
    strides = [a.stride(dim) for dim in range(a.dim())]
    strides = strides[:-1] + [stride, 1]
    shape.append(n_frames)
    shape.append(kernel_size)
    return a.as_strided(shape, strides)


def rescale(module):
    for sub in module.modules():
        if isinstance(sub, nn.Conv1d):
            sub.weight.data /= 2.0
            if sub.bias is not None:
                sub.bias.data /= 2.0


class Net(nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.width = width
        self.conv = nn.Conv1d(2, 3, 3, padding=1)
        nn.init.constant_(self.conv.weight, 3.0)
        nn.init.constant_(self.conv.bias, 1.0)
        self.offset = nn.Parameter(torch.zeros(3))
        self.offset.data = torch.full((3,), 0.5)
        rescale(self)

    def forward(self, x):
        y = self.conv(x) + self.offset[:, None]
        framed = frames_of(y, self.width, self.width // 2)
        steps = torch.arange(1, framed.size(-1) + 1).sqrt() + torch.exp(torch.arange(framed.size(-1))) * 1e-3
        return framed * steps
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return snippet_ports(tmp_path_factory, SOURCE, "2,9", "width")


@pytest.mark.parametrize("width", [2, 4])
@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(3, 11), seed=st.integers(0, 2 ** 16))
def test_framing_and_float_math_match_torch(ported, width, batch, length, seed):
    assert_matches_torch(ported(width), seed, (batch, 2, length))


def test_data_updates_run_in_the_constructor(ported):
    """Built with no torch weights loaded: the constructor's own `.data` updates are what the variables hold."""
    pair = PortedPair(ported(4), seed=0)
    model = type(pair.keras_model)(width=4)
    state = {entry.key: np.asarray(entry.variable) for entry in model.torch_state()}
    np.testing.assert_allclose(state["offset"], 0.5)
    np.testing.assert_allclose(state["conv.bias"], 0.5)
    np.testing.assert_allclose(state["conv.weight"], 1.5)
