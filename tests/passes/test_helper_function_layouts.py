"""A module whose `forward` hands its image to a helper function of the file (timm's `adaptive_avgmax_pool2d(x,
output_size)` calling `F.adaptive_avg_pool2d`) takes the layout the helper's first use of it works in: a pool picked
from a string at construction among such modules and pooling layers takes channels-last images, so a classifier head
after a convolution traces no Transpose beyond the boundary, and every choice matches torch."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import assert_same_outputs, port, random_input

MODEL = '''
import torch
import torch.nn.functional as F
from torch import nn


def adaptive_avgmax_pool2d(x, output_size=1):
    x_avg = F.adaptive_avg_pool2d(x, output_size)
    x_max = F.adaptive_max_pool2d(x, output_size)
    return 0.5 * (x_avg + x_max)


def pad_right(x):
    return F.pad(x, (0, 1, 0, 1))


class AdaptiveAvgMaxPool2d(nn.Module):
    def __init__(self, output_size=1):
        super().__init__()
        self.output_size = output_size

    def forward(self, x):
        return adaptive_avgmax_pool2d(x, self.output_size)


class PaddedMaxPool(nn.Module):
    def forward(self, x):
        x = pad_right(x)
        return F.adaptive_max_pool2d(x, 1)


class SelectPool(nn.Module):
    def __init__(self, pool_type="avg", flatten=True):
        super().__init__()
        if pool_type == "avgmax":
            self.pool = AdaptiveAvgMaxPool2d(1)
        elif pool_type == "padmax":
            self.pool = PaddedMaxPool()
        elif pool_type == "max":
            self.pool = nn.AdaptiveMaxPool2d(1)
        else:
            self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1) if flatten else nn.Identity()

    def forward(self, x):
        x = self.pool(x)
        return self.flatten(x)


class Net(nn.Module):
    def __init__(self, pool_type="avg"):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.global_pool = SelectPool(pool_type)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(self.global_pool(self.conv(x)))
'''


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("helper_layouts"), MODEL, input_specs=("3,8,8",))


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16), pool_type=st.sampled_from(["avg", "avgmax", "padmax",
                                                                                        "max"]))
def test_every_pool_matches_torch_without_transposes(net, batch, seed, pool_type):
    x = random_input(seed, (batch, 3, 8, 8))
    keras_model = assert_built_matches_torch(net, x, pool_type=pool_type)
    assert count_transposes(keras_model, [x]) <= 1


def test_the_default_port_converts_once(net):
    assert count_transposes(net.keras_model, [random_input(0, (2, 3, 8, 8))]) <= 1
    assert_same_outputs(net, [random_input(1, (2, 3, 8, 8))], tolerance=1e-5)


LIST_MODEL = '''
import torch
from torch import nn


def stack_maps(maps):
    return torch.stack(maps, 1)


def join_maps(maps, extra):
    return torch.cat(maps + [extra], dim=1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 4, 3, padding=1) for _ in range(3)])
        self.head = nn.Conv2d(15, 2, 1)

    def forward(self, x):
        maps = []
        for conv in self.convs:
            maps.append(conv(x))
        joined = self.head(join_maps(maps, x))
        return stack_maps(maps), joined
'''


@pytest.fixture(scope="module")
def list_net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("helper_lists"), LIST_MODEL, input_specs=("3,7,5",))


@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_a_helper_taking_a_list_of_images_gets_them_in_its_own_layout(list_net, batch, seed):
    """A list of channels-last images handed to a helper function that stacks or joins them reaches it as the
    helper was translated for: the stacked maps came out (N, 3, 7, 4, 5) instead of (N, 3, 4, 7, 5) when the call
    converted the items to torch's order for a helper translated for channels-last items."""
    x = random_input(seed, (batch, 3, 7, 5))
    assert_same_outputs(list_net, [x], tolerance=1e-5)
    assert count_transposes(list_net.keras_model, [x]) <= 3  # the input, and each output back to torch's order
