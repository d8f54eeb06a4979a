"""Modules registered under names built at run time and reached by them (VoVNet: `name = "stage%d" % (i + 2)`,
`self.stage_names.append(name)`, `self.add_module(name, _OSA_stage(...))`, then `for name in self.stage_names: x =
getattr(self, name)(x)`; other files call `self.stage2(x)` directly): porter knew neither the modules nor the
names, so each stage went through `call_module` in torch's layout (VoVNet 40 Transposes). `%`-formatted names are
name patterns as `.format` and f-strings are, `add_module` under a local holding one registers the module under the
pattern, a list attribute of such names is known to hold them, and `getattr(self, name)` of its loop variable or
`self.stage2` of a matching name is one of those modules: one Transpose, the input's. Matches torch."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Stage(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__()
        self.add_module("conv", nn.Conv2d(cin, cout, 3, 1, 1))
        self.add_module("norm", nn.BatchNorm2d(cout))
        self.add_module("relu", nn.ReLU(inplace=True))


class OpModel(nn.Module):
    def __init__(self, widths=(6, 8, 8)):
        super().__init__()
        self.stem = nn.Conv2d(3, widths[0], 3, 2, 1)
        self.stage_names = []
        for i in range(len(widths) - 1):
            name = "stage%d" % (i + 2)
            self.stage_names.append(name)
            self.add_module(name, Stage(widths[i], widths[i + 1]))
        self.add_module("head%d" % 1, nn.Conv2d(widths[-1], 4, 1))
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        x = self.stem(x)
        for name in self.stage_names:
            x = getattr(self, name)(x)
        x = self.stage3(x) if False else x
        return self.fc(self.head1(x).mean((2, 3)))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("patterned_names"), textwrap.dedent(SOURCE), input_specs=("3,12,10",))


def test_the_stages_take_the_image_as_held(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "call_module" not in code[code.index("class OpModel"):]
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 12, 10))) == 1


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), height=st.integers(4, 14), width=st.integers(4, 14))
def test_port_matches_torch(pair, seed, batch, height, width):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, height, width))])
