"""Property tests of `torch.gather` / `Tensor.gather` (porter/rules/tensor_ops.py, runtime `gather`) against real
torch: along every dim of a 3-d tensor (negative too), with an index smaller than the input in the other dims and
repeated indices, on drawn sizes including batch 1. CenterNet's `_gather_feat` (`feat.gather(1, ind)` with `ind`
expanded over the channels) ran as take_along_axis, which XLA lowers with three Transposes; along a dim other than
the last it is now a gather of full coordinates: none."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, c=6, k=3):
        super().__init__()
        self.k = k
        self.fc = nn.Linear(c, c)

    def forward(self, feat):  # (B, N, C)
        feat = self.fc(feat)
        score = feat.sum(2)
        _, ind = torch.topk(score, self.k)
        expanded = ind.unsqueeze(2).expand(ind.size(0), ind.size(1), feat.size(2))
        rows = feat.gather(1, expanded)  # CenterNet's _gather_feat
        first = torch.gather(feat, 0, torch.zeros_like(feat[:1, :2], dtype=torch.long))
        order = feat.argsort(dim=-1)
        last = feat.gather(-1, order[..., :2])
        by_rank = torch.gather(feat, dim=2, index=order.flip(-1))
        repeated = feat.gather(1, torch.zeros_like(expanded))
        return rows, first, last, by_rank, repeated
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("gather"), textwrap.dedent(SOURCE), input_specs=("5,6",))


def test_gathers_make_no_transpose(pair):
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 5, 6))) == 0


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), batch=st.integers(1, 3), points=st.sampled_from([3, 5, 9]))
def test_gather_matches_torch(pair, seed, batch, points):
    assert_same_outputs(pair, [random_input(seed, (batch, points, 6))])
