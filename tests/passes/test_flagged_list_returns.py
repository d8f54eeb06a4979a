"""A method returning the images it collected under a constructor flag and the last image otherwise (sail-sg's
PoolFormer and EfficientFormer: `if self.fork_feat: return outs`, else `return x`), its caller returning that
under the same flag and pooling the image otherwise. Both paths hold channels-last images: the callers take the
image as it lies, and the model's output conversion turns a list item by item. Before, every return went back to
torch's layout (the list and the image had no one template): 4 Transposes in sail-sg's PoolFormer, 3 here; now
the input's only. Both flag values match torch, eagerly and under XLA, for drawn sizes and batch 1."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, fork_feat=False, width=8, out_indices=(0, 2)):
        super().__init__()
        self.fork_feat = fork_feat
        self.out_indices = out_indices
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.network = nn.ModuleList([
            nn.Sequential(nn.Conv2d(width, width, 3, padding=1), nn.ReLU()),
            nn.Conv2d(width, width * 2, 3, stride=2, padding=1),
            nn.Sequential(nn.Conv2d(width * 2, width * 2, 3, padding=1, groups=2), nn.GELU()),
        ])
        if self.fork_feat:
            for i_layer in out_indices:
                self.add_module(f"norm{i_layer}", nn.GroupNorm(1, width * (1 + (i_layer > 0))))
        self.norm = nn.BatchNorm2d(width * 2)
        self.head = nn.Linear(width * 2, 5)

    def forward_tokens(self, x):
        outs = []
        for idx, block in enumerate(self.network):
            x = block(x)
            if self.fork_feat and idx in self.out_indices:
                x_out = getattr(self, f"norm{idx}")(x)
                outs.append(x_out)
        if self.fork_feat:
            return outs
        return x

    def forward(self, x):
        x = self.stem(x)
        x = self.forward_tokens(x)
        if self.fork_feat:
            return x
        x = self.norm(x)
        return self.head(x.mean([-2, -1]))
'''


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return port(tmp_path_factory.mktemp("fork_feat"), SOURCE, input_specs=("3,16,16",)).out_dir


@pytest.fixture(scope="module")
def pairs(folder):
    return {flag: PortedPair(folder, init_args={"fork_feat": flag}) for flag in (False, True)}


@settings(max_examples=8, deadline=None)
@given(fork_feat=st.booleans(), batch=st.integers(1, 3), height=st.sampled_from([7, 16]),
       width=st.sampled_from([9, 16]), seed=st.integers(0, 2**16))
def test_a_list_under_a_flag_or_an_image_matches_torch(pairs, fork_feat, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    pair = pairs[fork_feat]
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)


def test_the_image_path_traces_the_input_transpose_only(pairs):
    x = random_input(0, (1, 3, 16, 16))
    assert count_transposes(pairs[False].keras_model, [x]) == 1
    assert count_transposes(pairs[True].keras_model, [x]) == 3  # the input's, and each returned image's


def test_the_report_says_a_list_goes_back_item_by_item(folder):
    assert "item by item for a list (`each_image`)" in (folder / "PORTING.md").read_text()
