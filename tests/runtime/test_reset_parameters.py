"""`reset_parameters()` of the runtime's Conv and Linear layers, as a subclass calls it through super() (timm's
ScaledStdConv2d in NF-RegNet: `reset_parameters` guarded by `hasattr(self, "gain")`; before, the port raised
AttributeError building the model): the weights drawn again inside torch's default bound U(+-1/sqrt(fan_in)) (torch
draws inside it too), and the converted model still loads torch's weights and matches it."""

import textwrap

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SCALED_CONV = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class ScaledConv2d(nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, groups=1, gain_init=1.0):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding, groups=groups)
        self.gain_init = gain_init
        self.gain = nn.Parameter(torch.empty(out_channels, 1, 1, 1))
        self.reset_parameters()

    def reset_parameters(self):
        if hasattr(self, "gain"):
            nn.init.constant_(self.gain, self.gain_init)
            super().reset_parameters()

    def forward(self, x):
        return F.conv2d(x, self.weight * self.gain, self.bias, self.stride, self.padding, self.dilation, self.groups)


class ScaledLinear(nn.Linear):
    def reset_parameters(self):
        super().reset_parameters()

    def forward(self, x):
        return F.linear(x, self.weight * 0.5, self.bias)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = ScaledConv2d(3, 6, 3, stride=2, padding=1, gain_init=0.5)
        self.fc = ScaledLinear(6, 4)

    def forward(self, x):
        return self.fc(self.conv(x).mean((2, 3)))
'''


@given(fan=st.tuples(st.integers(1, 8), st.integers(1, 6), st.sampled_from([1, 2, 3, 5]), st.booleans()),
       seed=st.integers(0, 2**16))
def test_reset_parameters_draws_inside_torchs_bound(fan, seed):
    from porter.runtime.conv import Conv2d
    from porter.runtime.linear import Linear

    groups, per_group, kernel, bias = fan
    torch.manual_seed(seed)
    conv = Conv2d(groups * per_group, groups * 2, kernel, groups=groups, bias=bias)
    before = conv.weight.numpy().copy()
    conv.reset_parameters()
    bound = 1 / np.sqrt(per_group * kernel * kernel)
    assert np.abs(conv.weight.numpy()).max() <= bound + 1e-7
    assert conv.weight.numpy().size < 2 or not np.array_equal(before, conv.weight.numpy())
    if bias:
        assert np.abs(conv.bias.numpy()).max() <= bound + 1e-7
    linear = Linear(per_group * kernel, 3, bias=bias)
    linear.reset_parameters()
    assert np.abs(linear.weight.numpy()).max() <= 1 / np.sqrt(per_group * kernel) + 1e-7
    reference = torch.nn.Conv2d(groups * per_group, groups * 2, kernel, groups=groups)
    assert np.abs(reference.weight.detach().numpy()).max() <= bound + 1e-7  # torch's draws lie inside it too


def test_subclass_calling_super_reset_parameters_converts_and_matches(tmp_path):
    pair = port(tmp_path, textwrap.dedent(SCALED_CONV), input_specs=("3,7,7",))
    for batch, size in ((1, 7), (2, 8)):
        x = random_input(batch, (batch, 3, size, size))
        for jit in (False, True):
            assert_same_outputs(pair, [x], tolerance=1e-5, what=f"jit={jit} x{x.shape}", jit=jit)
