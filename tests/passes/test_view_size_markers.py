"""A view of a channels-last image to fewer dims is taken for the (N, C, H*W) merge of its spatial dims (held
(N, H*W, C), no data moved) when its sizes say so: the last is -1, the channel count read off the image, or a size
made of the image's spatial sizes, whatever its text (`tokens` of `n_h, n_w = h // p, w // p; tokens = n_h * n_w`,
carried on the size values: porter/passes/expressions.py). A size that is not one of those (`self.channels *
self.scale`, SKNet-like branch weights of a pooled 1x1 image) leaves the view in torch's order. Before, a text
heuristic read a name as "not a merge" and a product as "a merge": the tokens way traced 3 Transposes (now 1), the
branch weights way 3 (now 2). Sizes drawn by hypothesis (batch 1, odd sizes); compared eagerly and under XLA."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_matches_converting_at_the_boundary, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Tokens(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.proj = nn.Conv2d(3, dim, 2, stride=2)
        self.head = nn.Linear(dim, 3)

    def forward(self, x):
        n, _, h, w = x.shape
        n_h, n_w = h // 2, w // 2
        tokens = n_h * n_w
        x = self.proj(x).reshape(n, self.dim, tokens).permute(0, 2, 1)
        return self.head(x)


class BranchWeights(nn.Module):
    def __init__(self, channels, scale=1):
        super().__init__()
        self.channels, self.scale = channels, scale
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.branch1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.branch2 = nn.Conv2d(channels, channels, 3, padding=2, dilation=2)
        self.fc = nn.Conv2d(channels, 2 * channels, 1)

    def forward(self, x):
        x = self.stem(x)
        y = torch.stack([self.branch1(x), self.branch2(x)], dim=1)
        s = y.sum(dim=1).mean(dim=(2, 3), keepdim=True)
        w = self.fc(s).view(x.size(0), 2, self.channels * self.scale)
        w = torch.softmax(w, dim=1).unsqueeze(-1).unsqueeze(-1)
        return (y * w).sum(dim=1)


class Net(nn.Module):
    def __init__(self, how="tokens"):
        super().__init__()
        self.how = how
        self.tokens = Tokens(6)
        self.branches = BranchWeights(4)

    def forward(self, x):
        if self.how == "tokens":
            return self.tokens(x)
        return self.branches(x)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    ports = snippet_ports(tmp_path_factory, SOURCE, "3,6,4", "how")
    return lambda how: PortedPair(ports(how), seed=1)


@pytest.mark.parametrize("how", ["tokens", "branch_weights"])
@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 2), height=st.sampled_from([2, 6, 10]), width=st.sampled_from([4, 6]),
       seed=st.integers(0, 2**16))
def test_views_to_fewer_dims_merge_where_their_sizes_say_so(ported, how, batch, height, width, seed):
    pair, x = ported(how), random_input(seed, (batch, 3, height, width))
    assert_matches_converting_at_the_boundary(pair, x)
    if how == "tokens":  # (its output is tokens: no exit conversion)
        assert count_transposes(pair.keras_model, [x]) <= 1
