"""Module-level assignments the model uses that compute with torch (passes/module_code.py): ImageNet mean/std
tensors broadcast against channels-last activations, a tensor built from a torch dtype constant, used in forward
and in a helper function; they are translated (were copied, leaving `torch` undefined: exit 3) and match torch."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
SCALE = torch.ones(4, dtype=torch.float32) * 0.5
EPS = 1e-6


def normalise(x):
    return (x - MEAN) / (STD + EPS)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(normalise(x))
        y = F.relu(y) * SCALE.view(1, 4, 1, 1)
        return y + MEAN.mean()
'''


@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 3), size=st.sampled_from([3, 5, 8]), seed=st.integers(0, 2**16))
def test_module_level_tensors_match_torch(module_code_port, batch, size, seed):
    pair = module_code_port("net")
    assert_same_outputs(pair, [random_input(seed, (batch, 3, size, size))], tolerance=1e-5, what="module tensors")


def test_module_level_tensors_are_translated(module_code_port):
    pair = module_code_port("net")
    text = pair.keras_module.__loader__.get_source(pair.keras_module.__name__).split("# --- ported from")[-1]
    assert "torch." not in text
    assert "MEAN = " in text and "STD = " in text
    assert_same_outputs(pair, [random_input(0, (2, 3, 6, 6))], tolerance=1e-5, what="under XLA", jit=True)


@pytest.fixture(scope="module")
def module_code_port(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(SOURCE)))
