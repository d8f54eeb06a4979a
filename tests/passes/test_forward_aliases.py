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
