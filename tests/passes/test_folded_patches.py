"""MobileViT folds its patch tokens back into an image: `x.reshape(b, ph, pw, h, w, d).permute(0, 5, 3, 1, 4, 2)
.reshape(b, d, H, W)`. The port makes the channels-last image straight from the stored tokens with one Transpose
(`view_in_layout`: the runs of merged dims only come in another order), where torch's order cost two (the permute,
then the conversion for the next conv). The runtime's plan is checked against numpy on drawn sizes too.
"""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.regroup import view_in_layout
from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, patch=2):
        super().__init__()
        self.ph, self.pw = patch, patch
        self.conv1 = nn.Conv2d(3, 6, 3, padding=1)
        self.mix = nn.Linear(6, 6)
        self.conv2 = nn.Conv2d(6, 4, 1)

    def forward(self, x):
        x = self.conv1(x)
        b, d, H, W = x.shape
        h, w = H // self.ph, W // self.pw
        x = x.reshape(b, d, h, self.ph, w, self.pw).permute(0, 3, 5, 2, 4, 1)
        x = x.reshape(b, self.ph * self.pw, h * w, d)
        x = self.mix(x)
        x = x.reshape(b, self.ph, self.pw, h, w, d).permute(0, 5, 3, 1, 4, 2)
        x = x.reshape(b, d, H, W)
        return self.conv2(x)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return snippet_ports(tmp_path_factory, SOURCE, "3,8,8", "patch")


@settings(max_examples=4, deadline=None)
@given(patch=st.sampled_from([1, 2]), batch=st.integers(1, 3), h=st.integers(1, 4), w=st.integers(1, 3),
       seed=st.integers(0, 99))
def test_patches_fold_back_into_a_channels_last_image_with_one_transpose(ported, patch, batch, h, w, seed):
    out = ported(patch)
    pair = PortedPair(out, seed=seed, init_args={"patch": patch})
    x = random_input(seed, (batch, 3, h * patch, w * patch))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
    # the boundary's two, the patches cut out and folded back in: one each
    assert count_transposes(pair.keras_model, [x]) <= 4


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(1, 3), min_size=5, max_size=5), seed=st.integers(0, 99))
def test_view_in_layout_moves_whole_runs_with_one_transpose(sizes, seed):
    n, ph, pw, h, w = sizes
    d = 3
    tokens = np.random.default_rng(seed).standard_normal((n, ph, pw, h, w, d)).astype("float32")
    expected = tokens.transpose(0, 5, 3, 1, 4, 2).reshape(n, d, h * ph, w * pw).transpose(0, 2, 3, 1)
    got = view_in_layout(tf.constant(tokens), [0, 3, 5, 2, 4, 1], [0, 2, 3, 1], n, d, h * ph, w * pw)
    np.testing.assert_array_equal(np.asarray(got), expected)
