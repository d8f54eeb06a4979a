"""A squeeze-excitation block whose constructor flag picks conv or linear layers and the forward's branches
(pytorchcv's SEBlock: `if not self.use_conv: w = w.view(x.size(0), -1)`, `w = self.conv1(w) if self.use_conv else
self.fc1(w)`), built with the flag of its model's constructor (unknown to the block's generic call) or with a
literal (a call specialised for it, where `not self.use_conv` is decided too).

What broke before: the join after `if not self.use_conv:` took the flattened branch's rank for both paths, so the
1x1 conv of the other path got its input in torch's layout unconverted; the flattened branch's reorder named the
caller's layer (`self.stem.out_channels`) inside the block; a specialisation translated the dead branch of
`not self.flag`. Each port matches torch, eagerly and under XLA, for drawn flags, sizes and batches.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.passes.snippet_ports import assert_matches_torch, snippet_ports

SOURCE = '''
import torch
from torch import nn


class SE(nn.Module):
    def __init__(self, c, use_conv=True):
        super().__init__()
        self.use_conv = use_conv
        self.pool = nn.AdaptiveAvgPool2d(1)
        if use_conv:
            self.conv1 = nn.Conv2d(c, c // 2, 1)
            self.conv2 = nn.Conv2d(c // 2, c, 1)
        else:
            self.fc1 = nn.Linear(c, c // 2)
            self.fc2 = nn.Linear(c // 2, c)

    def forward(self, x):
        w = self.pool(x)
        if not self.use_conv:
            w = w.view(x.size(0), -1)
        w = self.conv1(w) if self.use_conv else self.fc1(w)
        w = torch.relu(w)
        w = self.conv2(w) if self.use_conv else self.fc2(w)
        w = torch.sigmoid(w)
        if not self.use_conv:
            w = w.unsqueeze(2).unsqueeze(3)
        return x * w


class Net(nn.Module):
    def __init__(self, c=6, use_conv=True):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.se = SE(c, use_conv=use_conv)
        self.fixed = SE(c, use_conv=True)
        self.head = nn.Linear(c, 2)

    def forward(self, x):
        x = self.fixed(self.se(self.stem(x)))
        return self.head(x.mean((2, 3)))
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """use_conv -> output folder of the port built with it."""
    return snippet_ports(tmp_path_factory, SOURCE, "3,8,8", "use_conv")


@settings(max_examples=4, deadline=None)
@given(use_conv=st.booleans(), batch=st.integers(1, 2), size=st.sampled_from([3, 6, 7]), seed=st.integers(0, 2**16))
def test_flag_chosen_branches_match_torch(ported, use_conv, batch, size, seed):
    assert_matches_torch(ported(use_conv), seed, (batch, 3, size, size))


def test_the_block_names_no_layer_of_its_caller(ported):
    block = (ported(False) / "op_model_keras.py").read_text().split("class SE")[1].split("class Net")[0]
    assert "self.stem" not in block
