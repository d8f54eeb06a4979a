"""A Linear whose output forward views as an image (passes/image_views.py): VAE and GAN decoders project a latent
vector and view it as an image for the (transposed) convolutions after it, `h = self.fc(z)`, `h = h.view(-1,
self.channels, 4, 4)`; in torch's order the view handed them an image to transpose (AntixK's VanillaVAE: 3
Transposes where its boundary needs 2). The Linear now loads its weight rows and bias permuted, (C, H, W) to (H, W,
C), and the view splits its output into the image channels-last: through a bound name rebound by an activation,
chained (`F.relu(self.fc(z)).view(...)`), a Sequential holding the Linear (PyTorch-GAN's `self.l1 =
nn.Sequential(nn.Linear(...))`), a channel size read from `self` or written as a number. A Linear whose output is
also read otherwise keeps torch's order; a projected vector read again after its view goes back to torch's order
there. The ports match torch (hypothesis-drawn inputs, batch 1 included)."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

DECODERS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self, z=6, init_size=3):
        super().__init__()
        self.channels, self.init_size = 5, init_size
        self.fc = nn.Linear(z, 5 * 4 * 4)
        self.l1 = nn.Sequential(nn.Linear(z, 7 * init_size ** 2))
        self.proj = nn.Linear(z, 4 * 3 * 3)
        self.plain = nn.Linear(z, 2 * 3 * 3)
        self.up = nn.ConvTranspose2d(5, 3, 3, stride=2, padding=1)
        self.conv = nn.Conv2d(7, 3, 3, padding=1)
        self.conv3 = nn.Conv2d(4, 3, 3, padding=1)
        self.conv2 = nn.Conv2d(2, 3, 3, padding=1)

    def forward(self, z):
        h = self.fc(z)
        h = F.leaky_relu(h, 0.2)
        h = h.view(-1, self.channels, 4, 4)
        out = self.l1(z)
        out = out.view(out.shape[0], 7, self.init_size, self.init_size)
        p = torch.tanh(self.proj(z)).reshape(z.size(0), 4, 3, 3)
        q = self.plain(z)
        r = self.conv2(q.view(-1, 2, 3, 3)) + q.mean()
        return self.up(h).mean((2, 3)) + self.conv(out).mean((2, 3)) + self.conv3(p).mean((2, 3)) + r.mean((2, 3))
'''

REREAD = '''
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, z=6):
        super().__init__()
        self.fc = nn.Linear(z, 4 * 3 * 3)
        self.conv = nn.Conv2d(4, 2, 3)

    def forward(self, z):
        h = self.fc(z)
        image = h.view(z.size(0), 4, 3, 3)
        return self.conv(image).flatten(1) + h[:, :2] * h.sum(1, keepdim=True)
'''


@pytest.fixture(scope="module")
def decoders(tmp_path_factory):
    return port(tmp_path_factory.mktemp("image_views"), textwrap.dedent(DECODERS), input_specs=("6",))


@pytest.fixture(scope="module")
def reread(tmp_path_factory):
    return port(tmp_path_factory.mktemp("image_view_reread"), textwrap.dedent(REREAD), input_specs=("6",))


def test_the_views_split_the_projections_channels_last(decoders):
    code = (decoders.out_dir / "op_model_keras.py").read_text()
    assert '"fc": "self.channels"' in code and '"l1.0": "7"' in code and '"proj": "4"' in code
    assert '"plain"' not in code  # (also read by `q.mean()`: torch's order)
    decoders.build()
    assert xla_transposes(decoders.keras_model, random_input(0, (2, 6))) == 1  # the plain Linear's view (was 4)


def test_a_projection_read_after_its_view_goes_back_to_torchs_order(reread):
    reread.build()
    assert_same_outputs(reread, [random_input(1, (2, 6))])


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3))
def test_the_decoders_match_torch(decoders, seed, batch):
    assert_same_outputs(decoders, [random_input(seed, (batch, 6))])
