"""A name an if-branch rebinds to a module class porter cannot see (porter/passes/modules.py `REBOUND_UNKNOWN`).

timm's `get_norm_act_layer(nn.BatchNorm2d)` returns `BatchNormAct2d` from its `else:` branch
(`_NORM_TO_NORM_ACT_MAP.get(type_name)`), while an `elif` branch returns the argument itself. The scan kept only the
branch it could read, typed `norm_act_layer(4)` as torch's BatchNorm2d and handed it a channels-last image; the
module built at run time took torch's layout (timm EfficientNet / MobileNetV3 failed: "scale must have the same
number of elements as the channels of x"). Now such a name is unknown after the if: the call dispatches on the
module it gets. Compared with real torch on hypothesis-drawn inputs.
"""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch.nn as nn


class NormAct(nn.BatchNorm2d):
    def forward(self, x):
        return super().forward(x).relu()


_NORM_ACT = {"batchnorm2d": NormAct}


def get_norm_act_layer(norm_layer):
    if norm_layer in (NormAct,):
        norm_act_layer = norm_layer
    else:
        norm_act_layer = _NORM_ACT.get(norm_layer.__name__.lower())
    return norm_act_layer


class OpModel(nn.Module):
    def __init__(self, norm_layer=nn.BatchNorm2d):
        super().__init__()
        norm_act_layer = get_norm_act_layer(norm_layer)
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = norm_act_layer(4)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        return self.conv2(self.bn(self.conv(x)))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("rebound"), textwrap.dedent(SOURCE))


def test_module_from_an_unreadable_branch_is_called_by_what_it_is(pair):
    assert "call_module(self.bn, " in (pair.out_dir / "op_model_keras.py").read_text()


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), size=st.integers(3, 9))
def test_port_matches_torch(pair, seed, batch, size):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, size, size))])
