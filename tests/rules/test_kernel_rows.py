"""Weight standardisation as timm writes it (porter/rules/kernel_rows.py): `F.batch_norm(self.weight.reshape(1,
self.out_channels, -1), None, None, weight=..., training=True, momentum=0., eps=...).reshape_as(self.weight)` handed
to `F.conv2d` (NF-Nets' ScaledStdConv2d with its gain, BiT's StdConv2d without), standardised where the kernel lies:
no Transpose (NF-RegNet-B0 traced 261, now 99: the rest are its activations'). Convolutions with groups, dilation,
stride 2 with padding, odd kernels; the rows used another way (`reshape(self.weight.shape)`, the rows themselves)
keep torch's exact values, as do the rows `(O, -1)`, which batch norm normalises across the output channels.
Against real torch, eagerly and under XLA, drawn batch and sizes, batch 1."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_matches_converting_at_the_boundary, assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class ScaledStdConv2d(nn.Conv2d):
    def __init__(self, cin, cout, k, stride=1, padding=0, dilation=1, groups=1, gamma=1.0, eps=1e-6):
        super().__init__(cin, cout, k, stride=stride, padding=padding, dilation=dilation, groups=groups)
        self.gain = nn.Parameter(torch.full((self.out_channels, 1, 1, 1), 1.5))
        self.scale = gamma * self.weight[0].numel() ** -0.5
        self.eps = eps

    def forward(self, x):
        weight = F.batch_norm(
            self.weight.reshape(1, self.out_channels, -1), None, None,
            weight=(self.gain * self.scale).view(-1),
            training=True, momentum=0., eps=self.eps).reshape_as(self.weight)
        return F.conv2d(x, weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class StdConv2d(nn.Conv2d):
    def __init__(self, *args, eps=1e-8, **kwargs):
        super().__init__(*args, **kwargs)
        self.eps = eps

    def forward(self, x):
        weight = F.batch_norm(self.weight.reshape(1, self.out_channels, -1), None, None, training=True,
                              momentum=0., eps=self.eps)
        {std_conv}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = ScaledStdConv2d(3, 8, 3, padding=1)
        self.b = StdConv2d(8, 8, 3, stride=2, padding=1, groups=2, bias=False)
        self.c = ScaledStdConv2d(8, 6, 5, padding=4, dilation=2, groups=2)
        self.d = StdConv2d(6, 4, 1)

    def forward(self, x):
        return self.d(F.relu(self.c(F.relu(self.b(F.relu(self.a(x)))))))
'''

STANDARDISED = SOURCE.replace(
    "{std_conv}", "return F.conv2d(x, weight.reshape_as(self.weight), self.bias, self.stride, self.padding, "
                  "self.dilation, self.groups)")
# the standardised rows read another way than `reshape_as` of the kernel: torch's order, exact
OTHER_USES = SOURCE.replace(
    "{std_conv}", "return F.conv2d(x, weight.reshape(self.weight.shape), self.bias, self.stride, self.padding, "
                  "self.dilation, self.groups) + weight.mean() + F.batch_norm(self.weight.reshape(self.out_channels, "
                  "-1), None, None, training=True).reshape_as(self.weight).mean()")


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    return {name: port(tmp_path_factory.mktemp(name), textwrap.dedent(text), input_specs=("3,9,9",))
            for name, text in (("standardised", STANDARDISED), ("other_uses", OTHER_USES))}


def test_standardised_kernels_are_computed_where_they_lie(pairs):
    code = (pairs["standardised"].out_dir / "op_model_keras.py").read_text()
    assert code.count("standardized_kernel(self.weight") == 2 and "conv2d(x, TorchKernel(weight)" in code
    assert "view_in_layout(" not in code and "permute_axes(" not in code


@settings(max_examples=12, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([5, 8, 9]), width=st.sampled_from([6, 11]),
       seed=st.integers(0, 2**16))
def test_weight_standardised_convolutions_match_torch(pairs, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_matches_converting_at_the_boundary(pairs["standardised"], x, tolerance=1e-5)
    assert_same_outputs(pairs["other_uses"], [x], tolerance=1e-5)
    assert_same_outputs(pairs["other_uses"], [x], tolerance=1e-5, jit=True)
