"""Property tests of the running-reduction rules (porter/rules/scan_ops.py; `cumsum` lives in tensor_ops) against
real torch, on the channels-last output of a Conv2d, for every dim form (positive, negative, keyword, method)."""

import inspect
import textwrap

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, conv_model, port, port_cache, random_input

# Values kept near 1 (1 + 0.2 * tanh) so a running product over up to 9 steps stays well scaled in float32.
OPS = {
    "cumprod_channels": "y = torch.cumprod(1.0 + 0.2 * torch.tanh(y), dim=1)",
    "cumprod_height_method": "y = (1.0 + 0.2 * torch.tanh(y)).cumprod(2)",
    "cumprod_width_negative": "y = torch.cumprod(1.0 + 0.2 * torch.tanh(y), -1)",
    "cumprod_batch": "y = torch.cumprod(1.0 + 0.2 * torch.tanh(y), 0)",
    "cumprod_then_sum": "y = torch.cumprod(1.0 + 0.2 * torch.tanh(y), dim=-3).sum(dim=(2, 3))",
    "cumsum_channels": "y = torch.cumsum(y, dim=1)",
    "cumsum_height_negative": "y = y.cumsum(-2)",
    "cumprod_int_counts": "y = torch.cumprod((y > 0).long() + 1, dim=1).float()",
    "diff_width": "y = torch.diff(y)",
    "diff_channels_twice": "y = torch.diff(y, n=2, dim=1)",
    "diff_height_method_prepend": "y = y.diff(dim=2, prepend=y[:, :, :1])",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {name: conv_model(op) for name, op in OPS.items()})


@pytest.mark.parametrize("name", sorted(OPS))
@given(batch=st.integers(1, 3), height=st.sampled_from([1, 3, 4, 7]), width=st.sampled_from([1, 2, 5, 8]),
       seed=st.integers(0, 2**16))
def test_scan_matches_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} x{x.shape}")


def test_cumprod_keeps_channels_last(ported):
    """The scan runs on the conv's channels-last output: no layout conversion before it."""
    module = ported("cumprod_channels").keras_module
    source = inspect.getsource(module.OpModel.call)
    assert "cumprod(" in source and "to_channels_first(1.0" not in source, source


STICK_BREAKING = '''
import torch
import torch.nn as nn


class StickBreaking(nn.Module):
    """Stick-breaking weights over a sequence: each step takes a share of what the earlier steps left."""

    def __init__(self, dim=8):
        super().__init__()
        self.gate = nn.Linear(dim, 1)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        beta = torch.sigmoid(self.gate(x)).squeeze(-1)
        remaining = torch.cumprod(1 - beta, dim=1)
        weights = beta * torch.cat([torch.ones_like(remaining[:, :1]), remaining[:, :-1]], dim=1)
        return (weights.unsqueeze(-1) * self.proj(x)).cumsum(dim=1)
'''


@pytest.fixture(scope="module")
def stick_breaking(tmp_path_factory):
    return port(tmp_path_factory.mktemp("stick_breaking"), textwrap.dedent(STICK_BREAKING), input_specs=("6,8",))


@given(batch=st.integers(1, 3), length=st.sampled_from([1, 2, 6, 11]), seed=st.integers(0, 2**16))
def test_stick_breaking_end_to_end(stick_breaking, batch, length, seed):
    x = random_input(seed, (batch, length, 8))
    for jit in (False, True):
        assert_same_outputs(stick_breaking, [x], tolerance=1e-5, what=f"stick_breaking jit={jit} x{x.shape}",
                            jit=jit)


torch.set_num_threads(1)
