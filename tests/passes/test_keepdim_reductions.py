"""Size-1 dims a keepdim reduction leaves (DGCNN's kNN: `xx = torch.sum(x ** 2, dim=1, keepdim=True)` of a Conv1d's
channels-last (B, N, C) output, then `-xx - inner - xx.transpose(2, 1)` with `inner` a (B, N, N) product in torch's
order): `-xx` led the subtraction, so the (B, N, N) distances were held transposed and the product, the transposed
norms and the `topk(dim=-1)` after it were transposed in and out. The reduced dim is now known to have size 1
(`Value.unit_dims`), so `xx` comes to torch's order by a reshape. The kNN distances match torch with no Transpose
beyond the model's entry."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


def knn_distances(x, k):
    inner = -2 * torch.matmul(x.transpose(2, 1), x)
    xx = torch.sum(x ** 2, dim=1, keepdim=True)
    pairwise_distance = -xx - inner - xx.transpose(2, 1)
    return pairwise_distance.topk(k=k, dim=-1)[0]


class OpModel(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.k = k
        self.conv = nn.Conv1d(3, 8, 1)

    def forward(self, x):
        x = self.conv(x)
        norms = x.pow(2).mean(dim=1, keepdim=True)
        return knn_distances(x, self.k), torch.tanh(x / (1 + norms))
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("keepdim"), textwrap.dedent(SOURCE), input_specs=("3,7",))


def test_distances_stay_in_torchs_order(pair):
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 3, 7))) <= 2


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), points=st.sampled_from([3, 5, 8]))
def test_port_matches_torch(pair, seed, batch, points):
    assert_same_outputs(pair, [random_input(seed, (batch, 3, points))], tolerance=1e-4)
