"""An optional layer class handed down as `norm_layer if patch_norm else None` (timm's and Swin's patch embeddings)
is the class when present: the receiver's `self.norm = norm_layer(dim)` (else None) is that layer, its call stays a
direct call in the layout the layer takes (no run-time dispatch, no transposes), and both choices match torch."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import assert_same_outputs, port, random_input

MODEL = '''
import torch
from torch import nn


class PatchEmbed(nn.Module):
    def __init__(self, dim=8, norm_layer=None):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, 2, stride=2)
        if norm_layer is not None:
            self.norm = norm_layer(dim)
        else:
            self.norm = None

    def forward(self, x):
        x = self.proj(x).flatten(2).transpose(1, 2)
        if self.norm is not None:
            x = self.norm(x)
        return x


class Net(nn.Module):
    def __init__(self, patch_norm=True, norm_layer=nn.LayerNorm):
        super().__init__()
        self.embed = PatchEmbed(norm_layer=norm_layer if patch_norm else None)
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        x = self.embed(x)
        return self.head(torch.flatten(self.pool(x.transpose(1, 2)), 1))
'''


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return port(tmp_path_factory.mktemp("optional"), MODEL, input_specs=("3,8,8",))


def test_the_optional_layer_is_called_directly(net):
    code = (net.out_dir / "op_model_keras.py").read_text()
    assert "x = self.norm(x)" in code and "call_module(self.norm" not in code


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16), patch_norm=st.booleans())
def test_either_choice_matches_torch(net, batch, seed, patch_norm):
    x = random_input(seed, (batch, 3, 8, 8))
    assert_built_matches_torch(net, x, patch_norm=patch_norm)


def test_no_transposes_beyond_the_boundary(net):
    assert count_transposes(net.keras_model, [random_input(0, (2, 3, 8, 8))]) <= 1
    assert_same_outputs(net, [random_input(1, (2, 3, 8, 8))], tolerance=1e-5)
