"""Property tests of `F.pairwise_distance` / `torch.pairwise_distance` and `nn.PairwiseDistance` (porter/rules/
similarity.py, runtime/similarity.py) against real torch: Siamese embeddings (a conv tower, flattened, a Linear)
compared by their p-distance for p 1, 2, 3 and inf, keepdim, a drawn eps, rows broadcast against one embedding, and
the distance between channel vectors of two channels-last feature maps (taken in torch's order); odd sizes and
batch 1 drawn by hypothesis, eagerly and under XLA."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

TEMPLATE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4, 6)
        self.dist = nn.PairwiseDistance(p=3.0, keepdim=True)

    def forward(self, x):
        y = self.conv(x)
        e = self.fc(y.mean((2, 3)))
        f = self.fc(y.amax((2, 3)))
        {op}
'''

CASES = {
    "p2": "return F.pairwise_distance(e, f)",
    "p1_keepdim_eps": "return torch.pairwise_distance(e, f, 1.0, 1e-3, True) * e",
    "p_inf_broadcast": "return F.pairwise_distance(e, f[:1], p=float('inf'))",
    "module_p3": "return self.dist(e, f) + 0 * e",
    "feature_maps": "return F.pairwise_distance(y.permute(0, 2, 3, 1), y.flip(1).permute(0, 2, 3, 1))",
}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), TEMPLATE.replace("{op}", CASES[name])))


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), height=st.integers(1, 6), width=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_pairwise_distance_matches_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} x{x.shape}")
    assert_same_outputs(ported(name), [x], tolerance=1e-5, what=f"{name} x{x.shape} (XLA)", jit=True)
