"""Property tests of `torch.norm` / `Tensor.norm` (rules/tensor_ops.py `_reduction`) against real torch. Its second
parameter is the order `p`, not the dim: the port passes the dim by keyword (before, `torch.norm(y, dim=1,
keepdim=True)` of a channels-last image was written `norm(y, 3, keepdim=True)`, the 3-norm of everything: wrong
numbers in a CoordConv-style block). Cases: over the channels kept and dropped, the order written positionally or by
keyword (1, 2, 3, inf), over the spatial dims, over everything, and a flattened tensor in torch's order with the dim
positional; odd sizes and batch 1 drawn by hypothesis."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

TEMPLATE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 5, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        {op}
        return y
'''

CASES = {
    "channels_keepdim": "y = y / torch.norm(y, dim=1, keepdim=True).clamp(min=1e-3)",
    "channels_dropped": "y = y.norm(dim=1)",
    "positional_order_and_dim": "y = torch.norm(y, 2, 1, True) + y",
    "order_one_spatial": "y = y.norm(p=1, dim=(2, 3))",
    "order_three_last": "y = y.norm(3, dim=-1, keepdim=True) * y",
    "order_inf_channels": "y = torch.norm(y, float('inf'), dim=1)",
    "everything": "y = torch.norm(y) + y",
    "flat_positional_dim": "y = torch.norm(y.reshape(y.size(0), -1), 2, 1)",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), TEMPLATE.replace("{op}", CASES[name])))


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 2), height=st.integers(1, 7), width=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_norm_matches_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    pair = ported(name)
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} x{x.shape}")
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} x{x.shape} (XLA)", jit=True)
