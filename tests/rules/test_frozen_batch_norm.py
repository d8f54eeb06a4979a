"""torchvision.ops.FrozenBatchNorm2d as a rule (porter/rules/norm.py): a model building it (as detection backbones
do) or choosing it from a module-level table (timm's `_NORM_MAP`: the name used as a value) ports to the channels-last runtime layer, not a third-party stub; the port matches torch
with its buffers drawn off their defaults, on hypothesis-drawn inputs, and traces only the boundary's Transposes."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.corpus.torchvision_support import import_torchvision
from tests.rules.op_ports import assert_same_outputs, port, random_input

import_torchvision()

SOURCE = '''
import torch
import torch.nn as nn
from torchvision.ops import misc as misc_nn_ops
from torchvision.ops import FrozenBatchNorm2d

_NORM_MAP = dict(batchnorm2d=nn.BatchNorm2d, frozenbatchnorm2d=FrozenBatchNorm2d)  # (timm's create_norm.py)


class OpModel(nn.Module):
    def __init__(self, norm_layer=misc_nn_ops.FrozenBatchNorm2d, norm="frozenbatchnorm2d"):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, stride=2, padding=1, bias=False)
        self.bn1 = norm_layer(6)
        self.conv2 = nn.Conv2d(6, 5, 3, padding=1, bias=False)
        self.bn2 = FrozenBatchNorm2d(5, eps=1e-3)
        self.bn3 = _NORM_MAP[norm](5)

    def forward(self, x):
        return self.bn3(self.bn2(self.conv2(torch.relu(self.bn1(self.conv(x))))))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("frozen_bn"), textwrap.dedent(SOURCE))


def test_the_layer_is_the_runtime_one(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "not_supported" not in code and "FrozenBatchNorm2d" in code


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), height=st.integers(3, 9), width=st.integers(3, 9))
def test_port_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])


def test_images_stay_channels_last(pair):
    assert count_transposes(pair.keras_model, [random_input(0, (2, 3, 8, 7))]) <= 2
