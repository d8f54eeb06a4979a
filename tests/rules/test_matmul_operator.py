"""The `@` operator with a vector operand (`normed @ self.beta` with beta of shape (d,), vit-pytorch's hyper
connections): torch.matmul's promotion of 1-d operands, which TensorFlow's `@` (tf.matmul) rejects; operands of
rank >= 2 keep `@`."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.beta = nn.Parameter(torch.randn(dim))
        self.alpha = nn.Parameter(torch.randn(dim, 3))
        self.gamma = nn.Parameter(torch.randn(5))

    def forward(self, x):
        weights = (x @ self.beta).tanh()              # (b, n, d) @ (d,) -> (b, n)
        mixed = x @ self.alpha                         # (b, n, d) @ (d, 3) -> (b, n, 3)
        pooled = self.gamma @ x                        # (n,) @ (b, n, d) -> (b, d)
        return weights.sum(-1, keepdim=True) + mixed.mean(1) + pooled.mean(-1, keepdim=True) + self.beta @ self.beta
'''


@pytest.fixture(scope="module")
def matmul_port(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(SOURCE), input_specs=("5,6",)))


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_matmul_operator_with_vectors_matches_torch(matmul_port, batch, seed):
    pair = matmul_port("net")
    assert_same_outputs(pair, [random_input(seed, (batch, 5, 6))], tolerance=1e-5, what="@ with vectors")


def test_matmul_operator_with_vectors_under_xla(matmul_port):
    assert_same_outputs(matmul_port("net"), [random_input(0, (2, 5, 6))], tolerance=1e-5, what="XLA", jit=True)
