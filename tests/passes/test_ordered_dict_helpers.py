"""Sequentials built from a helper's `(name, module)` pairs (VoVNet's `nn.Sequential(OrderedDict(conv3x3(in_ch,
out_ch, module_name, postfix)))`, the helper returning `[(f"{module_name}_{postfix}/conv", nn.Conv2d(...)), ...]`):
the children were unknown, so each Sequential took and gave images in torch's layout (a Transpose in and out of
each: VoVNet 60). The pairs' modules are now its children in order: one Transpose, the input's."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
from collections import OrderedDict

import torch.nn as nn


def conv3x3(in_channels, out_channels, module_name, postfix, stride=1):
    return [
        (f"{module_name}_{postfix}/conv", nn.Conv2d(in_channels, out_channels, 3, stride, 1, bias=False)),
        (f"{module_name}_{postfix}/norm", nn.BatchNorm2d(out_channels)),
        (f"{module_name}_{postfix}/relu", nn.ReLU(inplace=True)),
    ]


class OpModel(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        stem = conv3x3(3, 8, "stem", "1", 2)
        stem += conv3x3(8, 8, "stem", "2")
        self.stem = nn.Sequential(OrderedDict(stem))
        self.layers = nn.ModuleList()
        for i in range(2):
            self.layers.append(nn.Sequential(OrderedDict(conv3x3(8, 8, "OSA", i))))
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        x = self.stem(x)
        for layer in self.layers:
            x = layer(x)
        return self.fc(x.mean((2, 3)))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("ordered_dict_helpers"), textwrap.dedent(SOURCE), input_specs=("3,15,15",))


def test_only_the_input_is_transposed(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "call_module" not in code
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 15, 15))) == 1


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), size=st.integers(6, 17))
def test_port_matches_torch(pair, seed, batch, size):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, size, size))])
