"""Numeric tests of porter.runtime.linear against real torch.nn.Linear / F.linear."""

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from porter.runtime.linear import Identity, Linear, linear
from porter.verify.compare import assert_equivalent
from porter.verify.torch_bridge import copy_torch_weights, perturb_torch_module


@given(batch=st.integers(1, 4), extra=st.lists(st.integers(1, 5), max_size=2), cin=st.integers(1, 17),
       cout=st.integers(1, 13), bias=st.booleans(), seed=st.integers(0, 2**16))
def test_linear_matches_torch(batch, extra, cin, cout, bias, seed):
    torch.manual_seed(seed)
    reference = perturb_torch_module(torch.nn.Linear(cin, cout, bias=bias), seed)
    ported = copy_torch_weights(reference, Linear(cin, cout, bias=bias))
    x = np.random.default_rng(seed).standard_normal((batch, *extra, cin)).astype(np.float32)
    expected = reference(torch.from_numpy(x)).detach().numpy()
    assert_equivalent(expected, np.asarray(ported(x)))
    assert_equivalent(expected, np.asarray(linear(x, ported.weight, ported.bias)))


def test_identity_ignores_arguments():
    x = np.ones((2, 3), np.float32)
    assert np.array_equal(np.asarray(Identity(54, unused=1)(x)), x)
