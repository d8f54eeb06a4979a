"""Flatten and Unflatten inside an nn.Sequential, beside a Linear (passes/held_reshapes.py): a Sequential autoencoder
(`nn.Sequential(conv..., nn.Flatten(), nn.Linear(...))`, `nn.Sequential(nn.Linear(...), nn.ReLU(), nn.Unflatten(1,
(C, H, W)), nn.ConvTranspose2d(...), ...)`) converted the image to torch's order before each Flatten and back after
each Unflatten: 4 Transposes where the model's boundary needs 2. The Flatten now merges the image as it lies and the
Linear after it loads its weight columns permuted; the Linear before an Unflatten loads its weight rows and bias
permuted and the Unflatten splits its output into the image channels-last. The ports match torch (weights as torch
initialises them, hypothesis-drawn inputs, batch 1 included); layers that do not commute with the permutation (a
BatchNorm1d between the Linear and the Unflatten) keep torch's order."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

AUTOENCODER = '''
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, z=6, width=8):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(3, width, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, stride=2, padding=1), nn.ReLU(),
            nn.Flatten(), nn.Dropout(0.1), nn.Linear(2 * width * 3 * 3, z))
        self.decoder = nn.Sequential(
            nn.Linear(z, 2 * width * 3 * 3), nn.ReLU(),
            nn.Unflatten(1, (2 * width, 3, 3)),
            nn.ConvTranspose2d(2 * width, width, 4, stride=2, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(width, 3, 3, stride=2, padding=1), nn.Sigmoid())

    def forward(self, x):
        return self.decoder(self.encoder(x))
'''

# a VAE whose encoder ends in its Flatten (the caller's two Linears read it), a 3d decoder, and a generator whose
# BatchNorm1d stands between the Linear and the Unflatten (torch's order kept there)
VAE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, latent=5):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 6, 3, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Flatten())
        self.fc_mu = nn.Linear(6 * 5 * 5, latent)
        self.fc_var = nn.Linear(6 * 5 * 5, latent)
        self.volume = nn.Sequential(nn.Linear(latent, 4 * 2 * 3 * 3), nn.Unflatten(1, (4, 2, 3, 3)),
                                    nn.Conv3d(4, 2, 3, padding=1), nn.Flatten(1), nn.Linear(2 * 2 * 3 * 3, 3))
        self.generator = nn.Sequential(nn.Linear(latent, 4 * 3 * 3), nn.BatchNorm1d(4 * 3 * 3), nn.ReLU(),
                                       nn.Unflatten(1, (4, 3, 3)), nn.ConvTranspose2d(4, 2, 4, stride=2, padding=1))

    def forward(self, x):
        h = self.encoder(x)
        mu, logvar = self.fc_mu(h), self.fc_var(h)
        z = mu + 0.5 * logvar
        return self.volume(z), self.generator(z).mean((2, 3))
'''


@pytest.fixture(scope="module")
def autoencoder(tmp_path_factory):
    return port(tmp_path_factory.mktemp("held_autoencoder"), textwrap.dedent(AUTOENCODER), input_specs=("3,12,12",))


@pytest.fixture(scope="module")
def vae(tmp_path_factory):
    return port(tmp_path_factory.mktemp("held_vae"), textwrap.dedent(VAE), input_specs=("3,10,10",))


def test_the_autoencoder_converts_at_its_boundary_only(autoencoder):
    code = (autoencoder.out_dir / "op_model_keras.py").read_text()
    assert '"encoder.6": "self.encoder[2].out_channels"' in code  # the Linear after the Flatten (a Dropout between)
    assert '"decoder.0": "self.decoder[2].unflattened_size[0]"' in code
    assert 'torch_held_reshapes = ["decoder.2", "encoder.4"]' in code
    autoencoder.build()
    assert xla_transposes(autoencoder.keras_model, random_input(0, (2, 3, 12, 12))) == 2  # was 4


def test_a_flatten_ending_a_sequential_and_an_unflatten_to_a_volume_convert_nothing(vae):
    code = (vae.out_dir / "op_model_keras.py").read_text()
    assert '"fc_mu": "self.encoder[0].out_channels"' in code and '"fc_var": "self.encoder[0].out_channels"' in code
    assert '"volume.1"' in code and '"generator.3"' not in code  # (the BatchNorm1d's features stay in torch's order)
    vae.build()
    # the input's, and the generator's Unflatten (a BatchNorm1d before it)
    assert xla_transposes(vae.keras_model, random_input(0, (2, 3, 10, 10))) == 2


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3))
def test_the_autoencoder_matches_torch(autoencoder, seed, batch):
    assert_same_outputs(autoencoder, [random_input(seed, (batch, 3, 12, 12))])


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(2, 3))
def test_the_vae_matches_torch(vae, seed, batch):
    assert_same_outputs(vae, [random_input(seed, (batch, 3, 10, 10))])
