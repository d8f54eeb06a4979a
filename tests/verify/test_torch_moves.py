"""porter.verify.torch_moves counts the axis moves a torch forward makes that reorder elements, and only those."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.torch_moves import count_torch_data_moves

MOVES = {  # forward body on x (N, C, H, W) -> (moves counted, for every shape drawn)
    "permute": (lambda x: x.permute(0, 2, 3, 1) * 2, 1),
    "function_and_method": (lambda x: torch.permute(x, (0, 3, 1, 2)).transpose(1, 2).contiguous(), 2),
    "identity_permute": (lambda x: x.permute(0, 1, 2, 3) + 1, 0),
    "property_mT": (lambda x: x.mT @ x, 1),
    "movedim": (lambda x: torch.movedim(x, 1, -1), 1),
    "reshape_only": (lambda x: x.reshape(x.shape[0], -1).flatten(), 0),
}


class Body(torch.nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body

    def forward(self, x):
        return self.body(x)


@pytest.mark.parametrize("name", sorted(MOVES))
@settings(max_examples=5, deadline=None)
@given(shape=st.tuples(st.integers(1, 3), st.integers(2, 4), st.integers(2, 5), st.integers(2, 5)))
def test_counts_the_moves_that_reorder_elements(name, shape):
    body, expected = MOVES[name]
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    assert count_torch_data_moves(Body(body), [x]) == expected


def test_a_move_of_size_one_axes_is_no_move():
    """(N, 1, 1, C) -> (N, C, 1, 1) keeps the element order: nothing is counted (the port reshapes)."""
    x = np.zeros((2, 1, 1, 5), "float32")
    assert count_torch_data_moves(Body(lambda t: t.permute(0, 3, 1, 2)), [x]) == 0
    assert count_torch_data_moves(Body(lambda t: t.transpose(1, 2)), [x]) == 0
