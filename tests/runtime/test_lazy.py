"""Numeric tests of porter.runtime.lazy against real torch lazy layers: LazyLinear, LazyConv1d/2d, LazyBatchNorm1d/2d
sized at the first call, weights copied after it (convolutions and batch norms run channels-last)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyConv1d, LazyConv2d, LazyLinear
from porter.verify.compare import assert_equivalent
from porter.verify.torch_bridge import copy_torch_weights, perturb_torch_module


def _materialised(reference, ported, x, channels_last_x):
    with torch.no_grad():
        reference(torch.from_numpy(x))
    ported(channels_last_x)
    perturb_torch_module(reference, 0)
    reference.eval()
    return copy_torch_weights(reference, ported)


@settings(deadline=None, max_examples=12)
@given(batch=st.integers(1, 3), cin=st.integers(1, 9), cout=st.integers(1, 7), bias=st.booleans(),
       seed=st.integers(0, 2**16))
def test_lazy_linear_matches_torch(batch, cin, cout, bias, seed):
    torch.manual_seed(seed)
    x = np.random.default_rng(seed).standard_normal((batch, 2, cin)).astype(np.float32)
    reference, ported = torch.nn.LazyLinear(cout, bias=bias), LazyLinear(cout, bias=bias)
    ported = _materialised(reference, ported, x, x)
    assert ported.weight.shape == (cout, cin)
    assert_equivalent(reference(torch.from_numpy(x)).detach().numpy(), np.asarray(ported(x)))


@settings(deadline=None, max_examples=12)
@given(batch=st.integers(1, 3), cin=st.integers(1, 6), cout=st.integers(1, 6), kernel=st.integers(1, 3),
       stride=st.integers(1, 2), rank=st.sampled_from([1, 2]), seed=st.integers(0, 2**16))
def test_lazy_conv_matches_torch(batch, cin, cout, kernel, stride, rank, seed):
    torch.manual_seed(seed)
    x = np.random.default_rng(seed).standard_normal((batch, cin) + (7,) * rank).astype(np.float32)
    torch_class, ported_class = {1: (torch.nn.LazyConv1d, LazyConv1d), 2: (torch.nn.LazyConv2d, LazyConv2d)}[rank]
    reference = torch_class(cout, kernel, stride=stride, padding=1)
    x_last = np.moveaxis(x, 1, -1)
    ported = _materialised(reference, ported_class(cout, kernel, stride=stride, padding=1), x, x_last)
    expected = np.moveaxis(reference(torch.from_numpy(x)).detach().numpy(), 1, -1)
    assert_equivalent(expected, np.asarray(ported(x_last)))


@settings(deadline=None, max_examples=10)
@given(batch=st.integers(2, 4), channels=st.integers(1, 6), rank=st.sampled_from([1, 2]), seed=st.integers(0, 2**16))
def test_lazy_batch_norm_matches_torch(batch, channels, rank, seed):
    torch.manual_seed(seed)
    shape = (batch, channels) + ((5, 5) if rank == 2 else (5,))
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    torch_class, ported_class = {1: (torch.nn.LazyBatchNorm1d, LazyBatchNorm1d),
                                 2: (torch.nn.LazyBatchNorm2d, LazyBatchNorm2d)}[rank]
    x_last = np.moveaxis(x, 1, -1)
    reference = torch_class()
    ported = _materialised(reference, ported_class(), x, x_last)
    assert ported.running_mean.shape == (channels,)
    expected = np.moveaxis(reference(torch.from_numpy(x)).detach().numpy(), 1, -1)
    assert_equivalent(expected, np.asarray(ported(x_last, training=False)))


def test_lazy_layer_state_before_the_first_call_is_a_clear_error():
    with pytest.raises(ValueError, match="first call"):
        LazyLinear(3).torch_state("net.")
