"""A block handed its paths stacked, (B, paths, C, H, W), that reduces them before its first conv (timm's
SelectiveKernelAttn: `x = x.sum(1).mean((2, 3), keepdim=True)`, then `self.fc_reduce(x)`). The conv convolves what
the reduction made, so it says nothing of the layout the block's parameter comes in: taken for a channels-last
image before, the parameter was converted as one (a 5-d tensor moved its paths axis last) and `x.shape[1]` read its
width (sknet.py's port raised an assertion). The layout preference stops at a rebinding that drops dims
(passes/rank_changing_rebinds.py). Its paths here are blocks whose activation comes from a registry
(`_ACTIVATIONS[name]`), which porter cannot type: their images' rank is unknown, as timm's ConvNormAct's. Compared
with real torch on hypothesis-drawn inputs."""

import textwrap

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.passes.rank_changing_rebinds import rank_changing_rebinds
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class PathAttention(nn.Module):
    def __init__(self, channels, num_paths=2):
        super().__init__()
        self.num_paths = num_paths
        self.fc_reduce = nn.Conv2d(channels, 4, kernel_size=1, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.fc_select = nn.Conv2d(4, channels * num_paths, kernel_size=1, bias=False)

    def forward(self, x):
        assert x.shape[1] == self.num_paths
        x = x.sum(1).mean((2, 3), keepdim=True)
        x = torch.relu(self.bn(self.fc_reduce(x)))
        x = self.fc_select(x)
        B, C, H, W = x.shape
        x = x.view(B, self.num_paths, C // self.num_paths, H, W)
        return torch.softmax(x, dim=1)


_ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU}


def create_act(name):
    return _ACTIVATIONS[name]


class ConvAct(nn.Module):
    def __init__(self, c_in, c_out, dilation, act="relu"):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=dilation, dilation=dilation)
        self.act = create_act(act)()

    def forward(self, x):
        return self.act(self.conv(x))


class SelectiveKernel(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.paths = nn.ModuleList([ConvAct(channels, channels, d) for d in (1, 2)])
        self.attn = PathAttention(channels, len(self.paths))

    def forward(self, x):
        x = torch.stack([op(x) for op in self.paths], dim=1)
        x = x * self.attn(x)
        return torch.sum(x, dim=1)


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 6, 3, stride=2, padding=1)
        self.sk = SelectiveKernel(6)
        self.head = nn.Linear(6, 5)

    def forward(self, x):
        return self.head(self.sk(self.stem(x)).mean((2, 3)))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("stacked"), textwrap.dedent(SOURCE), input_specs=("3,15,15",))


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.sampled_from([1, 2]), size=st.sampled_from([9, 15]))
def test_stacked_paths_match_torch(pair, seed, batch, size):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, size, size))], tolerance=1e-4)


@pytest.mark.parametrize("code, rebinds", [
    ("x = x.sum(1).mean((2, 3), keepdim=True)", 1),  # the sum drops the paths' dim
    ("x = x.mean((2, 3), keepdim=True)", 0),  # an image still: what the conv takes is the parameter's layout
    ("x = x.squeeze(1)", 1),
    ("y = x.sum(1)", 0),  # `x` still holds the parameter
])
def test_rebindings_that_drop_dims(code, rebinds):
    body = cst.parse_module(code + "\n")
    assert len(rank_changing_rebinds(body, {"x"})) == rebinds
