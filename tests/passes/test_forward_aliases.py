"""A class choosing its forward in its constructor (timm FasterNet's `Partial_conv3`: `self.forward =
self.forward_slicing` or `self.forward_split_cat`, no `def forward`; frontend/forward_aliases.py): the port calls the
chosen method (its `call` raised "has no forward in the source", and porter reported the file converted), keeps the
images channels-last through either, and matches torch on hypothesis-drawn inputs. A comment saying "training" in
one method no longer gives it a `training` parameter the other lacks (passes/classes.py `_reads_training`)."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class PartialConv(nn.Module):
    def __init__(self, dim, n_div, forward):
        super().__init__()
        self.dim_conv3 = dim // n_div
        self.dim_untouched = dim - self.dim_conv3
        self.partial_conv3 = nn.Conv2d(self.dim_conv3, self.dim_conv3, 3, 1, 1, bias=False)
        if forward == "slicing":
            self.forward = self.forward_slicing
        elif forward == "split_cat":
            self.forward = self.forward_split_cat
        else:
            raise NotImplementedError

    def forward_slicing(self, x):
        # only for inference
        x = x.clone()
        x[:, :self.dim_conv3, :, :] = self.partial_conv3(x[:, :self.dim_conv3, :, :])
        return x

    def forward_split_cat(self, x):
        # for training/inference
        x1, x2 = torch.split(x, [self.dim_conv3, self.dim_untouched], dim=1)
        x1 = self.partial_conv3(x1)
        return torch.cat((x1, x2), 1)


class OpModel(nn.Module):
    def __init__(self, mode="split_cat"):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.mix = PartialConv(8, 4, mode)
        self.head = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        return self.head(torch.relu(self.mix(self.stem(x))))
'''


@pytest.fixture(scope="module", params=["split_cat", "slicing"])
def pair(request, tmp_path_factory):
    return port(tmp_path_factory.mktemp("forward_aliases"), textwrap.dedent(SOURCE), init_args={"mode": request.param})


def test_the_chosen_method_is_the_call(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "has no forward" not in code
    assert "def forward_split_cat(self, x):" in code  # (no `training` parameter from its comment)


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), height=st.integers(3, 9), width=st.integers(3, 9))
def test_port_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])


def test_images_stay_channels_last(pair):
    assert count_transposes(pair.keras_model, [random_input(0, (2, 3, 7, 6))]) <= 2  # (in and out)


# A class with a `forward` of its own that its constructor swaps in one branch (timm FasterNet's `MLPBlock`:
# `self.forward = self.forward_layer_scale` where a layer scale is built, `else: self.forward = self.forward`): the
# port's call ran `forward` whatever the constructor chose (a silent mismatch), and `self.forward = self.forward`
# raised at construction (the port has no `forward`). Now `forward` is renamed `forward_default`, bound first.
OWN_FORWARD = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, layer_scale_init_value):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, padding=1)
        if layer_scale_init_value > 0:
            self.layer_scale = nn.Parameter(layer_scale_init_value * torch.ones(dim), requires_grad=True)
            self.forward = self.forward_layer_scale
        else:
            self.forward = self.forward

    def forward(self, x):
        return x + self.conv(x)

    def forward_layer_scale(self, x):
        return x + self.layer_scale.unsqueeze(-1).unsqueeze(-1) * self.conv(x)


class OpModel(nn.Module):
    def __init__(self, scale=0.5):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.block = Block(8, scale)
        self.head = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        return self.head(self.block(self.stem(x)))
'''


@pytest.fixture(scope="module", params=[0.5, 0.0])
def own_forward(request, tmp_path_factory):
    return port(tmp_path_factory.mktemp("own_forward"), textwrap.dedent(OWN_FORWARD),
                init_args={"scale": request.param})


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.integers(3, 9), width=st.integers(3, 9))
def test_a_swapped_own_forward_matches_torch(own_forward, seed, batch, height, width):
    assert_same_outputs(own_forward, [random_input(seed, (batch, 3, height, width))])


def test_a_swapped_own_forward_keeps_images_channels_last(own_forward):
    code = (own_forward.out_dir / "op_model_keras.py").read_text()
    assert "self.forward = self.forward_default" in code and "def forward_default(self, x):" in code
    assert count_transposes(own_forward.keras_model, [random_input(0, (2, 3, 7, 6))]) <= 2


# A class body binding `forward = _forward_impl` (a method under a second name): the port wrote the class-level line
# before the method existed (an undefined name, exit 3). The method is now ported as `call`, the original name kept
# only where the class reads it.
CLASS_LEVEL = '''
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)

    def _forward_impl(self, x):
        return self.bn(self.conv(x)).relu() + x

    forward = _forward_impl


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Linear(8, 4)

    def features(self, x):
        return self.blocks(self.stem(x))

    def _forward(self, x):
        return self.head(self.features(x).mean((2, 3)))

    forward = _forward
    extract = features
'''


@pytest.fixture(scope="module")
def class_level(tmp_path_factory):
    return port(tmp_path_factory.mktemp("class_level_forward"), textwrap.dedent(CLASS_LEVEL))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 2), height=st.integers(3, 9), width=st.integers(3, 9))
def test_a_class_level_forward_alias_matches_torch(class_level, seed, batch, height, width):
    assert_same_outputs(class_level, [random_input(seed, (batch, 3, height, width))])


def test_a_class_level_forward_alias_is_the_call(class_level):
    code = (class_level.out_dir / "op_model_keras.py").read_text()
    assert "_forward_impl" not in code and "forward = " not in code
    assert "def features(" in code and "def extract(" in code
    assert count_transposes(class_level.keras_model, [random_input(0, (2, 3, 7, 6))]) <= 2
