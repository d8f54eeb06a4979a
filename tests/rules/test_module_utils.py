"""torch.nn.modules.utils' tuple helpers in layer code written outside torch (CondConv's `self.kernel_size =
_pair(kernel_size)`, then `torch.randn(out, in, *self.kernel_size)`): `_pair` was a stub (`UnsupportedModule`), the
constructor failed. `_single`, `_pair`, `_triple` and `_ntuple(n)` now compute as torch's do (a scalar repeated,
an iterable kept); a functional conv with the weight they shape matches torch for drawn kernel sizes and inputs."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules.utils import _ntuple, _pair, _single, _triple


class OpModel(nn.Module):
    def __init__(self, kernel_size={kernel}, out_channels=4):
        super().__init__()
        self.kernel_size = _pair(kernel_size)
        self.padding = tuple(k // 2 for k in self.kernel_size)
        self.stride = _ntuple(2)(1)
        self.weight = nn.Parameter(torch.randn(out_channels, 3, *self.kernel_size) * 0.1)
        self.extra = _single(2)[0] + len(_triple(1))

    def forward(self, x):
        return F.conv2d(x, self.weight, None, self.stride, self.padding) * self.extra
'''


@pytest.fixture(scope="module", params=["3", "(3, 1)"])
def pair(request, tmp_path_factory):
    source = textwrap.dedent(SOURCE).replace("{kernel}", request.param)
    return port(tmp_path_factory.mktemp("module_utils"), source, input_specs=("3,9,7",))


@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2))
def test_tuple_helpers_shape_the_weight_as_torch(pair, seed, batch):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, 9, 7))])
