"""Property tests of the cosine-similarity rule (porter/rules/similarity.py) against real torch: on a Conv2d's
channels-last output along channels and along a spatial dim, between broadcast operands, with rows of zeros (torch
clamps each norm at eps) and a drawn eps, eagerly and under XLA; and its gradient near the clamp."""

import textwrap

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, forget_traces, port, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self, eps=1e-8):
        super().__init__()
        self.conv = nn.Conv2d(3, 5, 3, padding=1)
        self.eps = eps

    def forward(self, x):
        y = self.conv(x)
        {op}
'''

OPS = {
    "channels": "return F.cosine_similarity(y, x.mean(1, keepdim=True), eps=self.eps)",
    "width_torch_name": "return torch.cosine_similarity(y, torch.roll(y, 1, 3) - 0.2, dim=-1, eps=self.eps)",
    "broadcast_rows": "return F.cosine_similarity(y[:, :, :1], y, 2, self.eps) * 2.0",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name),
                                    textwrap.dedent(SOURCE).replace("{op}", OPS[name])))


@pytest.mark.parametrize("name", sorted(OPS))
@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([1, 3, 8]), width=st.sampled_from([2, 5, 8]),
       zero_rows=st.booleans(), eps=st.sampled_from([1e-8, 1e-3, 0.5]), seed=st.integers(0, 2**16))
def test_cosine_similarity_matches_torch(ported, name, batch, height, width, zero_rows, eps, seed):
    pair = ported(name)
    pair.torch_model.eps = pair.keras_model.eps = eps
    forget_traces(pair.keras_model)  # (eps is read as a constant when traced)
    x = random_input(seed, (batch, 3, height, width))
    if zero_rows:  # zero inputs: the conv gives its bias, the mean over channels gives 0 (the eps clamp decides)
        x[:, :, :1] = 0.0
    # a norm clamped at eps divides the conv output's own float32 rounding (1e-7 absolute, TensorFlow's conv and
    # torch's alike) by eps: at eps=1e-3, a 5e-4 output clamped (seed 65536) differs from torch's by 4e-5 of the
    # output's scale, as torch's own result differs from the float64 one by its conv's rounding / eps
    # (eps=1e-8 clamps only zero vectors: none here, the conv adds its bias; eps=0.5 amplifies by 2 at most)
    tolerance = 1e-4 if eps == 1e-3 else 1e-5
    assert_same_outputs(pair, [x], tolerance=tolerance, what=f"{name} eps={eps} x{x.shape}")
    assert_same_outputs(pair, [x], tolerance=tolerance, what=f"{name} eps={eps} x{x.shape} (XLA)", jit=True)


@pytest.mark.parametrize("eps", [1e-8, 0.7])
def test_cosine_similarity_gradients_match_torch(eps):
    """Gradients through the clamped norm are torch's (its clamp runs under no_grad)."""
    import tensorflow as tf

    from porter.runtime.similarity import cosine_similarity

    rng = np.random.default_rng(0)
    a = (rng.standard_normal((4, 3)) * np.array([[1.0], [0.1], [1.0], [0.0]])).astype(np.float32)
    b = rng.standard_normal((1, 3)).astype(np.float32)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    torch.nn.functional.cosine_similarity(ta, tb, dim=1, eps=eps).pow(2).sum().backward()
    ka, kb = tf.Variable(a), tf.Variable(b)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(cosine_similarity(ka, kb, dim=1, eps=eps)))
    grad_a, grad_b = tape.gradient(loss, [ka, kb])
    np.testing.assert_allclose(grad_a.numpy(), ta.grad.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grad_b.numpy(), tb.grad.numpy(), rtol=1e-4, atol=1e-6)
