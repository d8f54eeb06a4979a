"""A flatten after a Sequential of Sequential blocks (AntixK's PyTorch-VAE encoder: `nn.Sequential(*modules)` of
`nn.Sequential(nn.Conv2d(...), nn.BatchNorm2d(...), nn.LeakyReLU())`, then `torch.flatten(result, start_dim=1)`
into `fc_mu`): the channel count of the last block was not read through the nested Sequential, so the flatten
converted the image to torch's order (a Transpose) instead of permuting the Linear's weight columns at load time.
It is now read through (`last_channels(self.encoder)`, or `self.encoder[1][0].out_channels` for blocks written
out): the encoder's flatten is a reshape."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
from torch import nn


class OpModel(nn.Module):
    def __init__(self, in_channels=3, latent_dim=4, hidden_dims=(8, 16)):
        super().__init__()
        modules = []
        for h_dim in hidden_dims:
            modules.append(nn.Sequential(nn.Conv2d(in_channels, h_dim, 3, stride=2, padding=1),
                                         nn.BatchNorm2d(h_dim), nn.LeakyReLU()))
            in_channels = h_dim
        self.encoder = nn.Sequential(*modules)
        self.fc_mu = nn.Linear(hidden_dims[-1] * 4, latent_dim)
        self.fc_var = nn.Linear(hidden_dims[-1] * 4, latent_dim)

    def forward(self, x):
        result = self.encoder(x)
        result = torch.flatten(result, start_dim=1)
        return self.fc_mu(result), self.fc_var(result)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("nested_flatten"), textwrap.dedent(SOURCE), input_specs=("3,8,8",))


def test_the_flatten_is_a_reshape(pair):
    code = (pair.out_dir / "op_model_keras.py").read_text()
    assert "torch_flatten_inputs" in code and '"fc_mu": "last_channels(self.encoder)"' in code
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 8, 8))) == 1


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3))
def test_port_matches_torch(pair, seed, batch):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, 8, 8))])
