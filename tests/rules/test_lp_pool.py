"""Property tests of the power-average pooling rules (`F.lp_pool1d/2d/3d`, `nn.LPPool1d/2d/3d`: porter/rules/pool.py,
porter/runtime/lp_pool.py) against real torch, on channels-last conv outputs: norms 1, 1.5, 2 and 3, square and
rectangular windows, strides other than the window, ceil_mode's partial windows, a window as large as the image
(CBAM's `F.lp_pool2d(x, 2, (x.size(2), x.size(3)))`), and odd sizes and batch 1 drawn by hypothesis."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

TEMPLATE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv{dims}d(3, 5, 3, padding=1)
        self.pool = {module}

    def forward(self, x):
        y = self.conv(x)
        {op}
        return y
'''

# name -> (dims, module built in __init__, forward statement); odd norms pool a ReLU's output (torch takes a
# negative window sum's cube root as NaN, as TensorFlow does)
CASES = {
    "functional_norm2": (2, "None", "y = F.lp_pool2d(y, 2, 2)"),
    "functional_float_norm_rect_stride": (2, "None", "y = F.lp_pool2d(torch.relu(y), 1.5, (2, 3), stride=(1, 2))"),
    "functional_ceil_mode": (2, "None", "y = F.lp_pool2d(y, 2, 3, stride=2, ceil_mode=True)"),
    "whole_image_window": (2, "None", "y = F.lp_pool2d(y, 2, (y.size(2), y.size(3))).flatten(1)"),
    "module_norm3": (2, "nn.LPPool2d(3, 2, stride=1)", "y = self.pool(torch.relu(y))"),
    "module_norm1_1d": (1, "nn.LPPool1d(1, 3, stride=2)", "y = self.pool(y)"),
    "functional_1d_ceil": (1, "None", "y = F.lp_pool1d(y, 2, 2, ceil_mode=True)"),
    "module_3d": (3, "nn.LPPool3d(2, 2)", "y = self.pool(y)"),
}
SPECS = {1: "3,9", 2: "3,8,8", 3: "3,4,4,4"}


def source(name):
    dims, module, op = CASES[name]
    return TEMPLATE.replace("{dims}", str(dims)).replace("{module}", module).replace("{op}", op)


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """name -> PortedPair of the case, converted on first use."""
    return cached(lambda name: port(tmp_path_factory.mktemp(name), source(name), (SPECS[CASES[name][0]],)))


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 2), sizes=st.lists(st.sampled_from([3, 4, 5, 7, 8]), min_size=3, max_size=3),
       seed=st.integers(0, 2**16))
def test_lp_pool_matches_torch(ported, name, batch, sizes, seed):
    dims = CASES[name][0]
    x = random_input(seed, (batch, 3, *sizes[:dims]))
    pair = ported(name)
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} x{x.shape}")
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} x{x.shape} (XLA)", jit=True)


def test_lp_pool_runs_channels_last(ported):
    import inspect

    source = inspect.getsource(ported("functional_norm2").keras_module.OpModel.call)
    assert "lp_pool2d(y, 2, 2)" in source and "to_channels_first" not in source, source
