"""torch views of video nets that keep the channels whole (porter/rules/tensor_ops.py, view_orders_keeping_layout):
a 2D stage over time (`x.transpose(1, 2).reshape(n * t, c, h, w)`, back with `x.view(n, t, c, h, w).transpose(1,
2)`) and a segment consensus (`x.view(nt // s, s, c, h, w).mean(dim=1)`, TSN's); a channel shuffle whose last view
is given the channel count still regroups its channels (`.view(b, c, h, w)`; written as one statement, the
view, transpose and view run as one `view_chain`: passes/view_chains.py). The port keeps the clip or image
channels-last through them (no Transpose beyond the boundary ones) and matches torch for hypothesis-drawn shapes,
batch 1 and odd sizes included."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

TIME_FOLD = '''
import torch
import torch.nn as nn


class TimeFold(nn.Module):
    def __init__(self):
        super().__init__()
        self.temporal = nn.Conv3d(3, 4, (3, 1, 1), padding=(1, 0, 0))
        self.spatial = nn.Conv2d(4, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Conv3d(4, 5, 1)

    def forward(self, x):
        x = self.temporal(x)
        n, c, t, h, w = x.shape
        x = x.transpose(1, 2).reshape(n * t, c, h, w)
        x = torch.relu(self.bn(self.spatial(x)))
        x = x.view(n, t, c, h, w).transpose(1, 2)
        return self.head(x)
'''
SEGMENT_MEAN = '''
import torch
import torch.nn as nn


class SegmentMean(nn.Module):
    def __init__(self, segments=2):
        super().__init__()
        self.segments = segments
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.head = nn.Conv2d(4, 5, 1)

    def forward(self, x):
        x = self.conv(x)
        nt, c, h, w = x.size()
        x = x.view(nt // self.segments, self.segments, c, h, w).mean(dim=1)
        return self.head(x)
'''

SHUFFLE = '''
import torch.nn as nn


class Shuffle(nn.Module):
    def __init__(self, groups=2):
        super().__init__()
        self.groups = groups
        self.conv = nn.Conv2d(3, 6, 1)
        self.head = nn.Conv2d(6, 5, 1)

    def forward(self, x):
        x = self.conv(x)
        b, c, h, w = x.size()
        x = x.view(b, self.groups, c // self.groups, h, w).transpose(1, 2).contiguous().view(b, c, h, w)
        return self.head(x)
'''


@pytest.fixture(scope="module")
def time_fold(tmp_path_factory):
    return port(tmp_path_factory.mktemp("time_fold"), TIME_FOLD, ("3,2,5,5",))


@pytest.fixture(scope="module")
def segment_mean(tmp_path_factory):
    return port(tmp_path_factory.mktemp("segment_mean"), SEGMENT_MEAN, ("3,5,5",))


@pytest.fixture(scope="module")
def shuffle(tmp_path_factory):
    return port(tmp_path_factory.mktemp("shuffle"), SHUFFLE, ("3,5,5",))


def test_views_keep_the_clip_as_it_lies(time_fold, segment_mean, shuffle):
    for pair, views, chains in ((time_fold, 2, 0), (segment_mean, 1, 0), (shuffle, 0, 1)):
        text = (pair.out_dir / "op_model_keras.py").read_text()
        body = text[text.index("def call"):]
        assert body.count("view_in_layout(") == views
        assert body.count("view_chain(") == chains  # (the shuffle's view, transpose, view: one regrouping)
        assert "permute_axes" not in body and "to_channels_first(x)" not in body


sizes = st.integers(1, 5)


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 3), frames=st.integers(1, 3), height=sizes, width=sizes, seed=st.integers(0, 2**16))
def test_time_fold_matches_torch_without_transposes(time_fold, batch, frames, height, width, seed):
    x = random_input(seed, (batch, 3, frames, height, width))
    assert_same_outputs(time_fold, [x], tolerance=1e-5)
    assert count_transposes(time_fold.keras_model, [x]) <= 2  # the boundary conversions at most


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 3), height=sizes, width=sizes, seed=st.integers(0, 2**16))
def test_segment_mean_matches_torch_without_transposes(segment_mean, batch, height, width, seed):
    x = random_input(seed, (batch * 2, 3, height, width))
    assert_same_outputs(segment_mean, [x], tolerance=1e-5)
    assert count_transposes(segment_mean.keras_model, [x]) <= 2


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 3), height=sizes, width=sizes, seed=st.integers(0, 2**16))
def test_shuffle_given_the_channel_count_matches_torch_without_transposes(shuffle, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(shuffle, [x], tolerance=1e-5)
    assert count_transposes(shuffle.keras_model, [x]) <= 2
