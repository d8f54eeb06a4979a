"""An optional tensor held in another layout (timm's beit.py: `rel_pos_bias = self.rel_pos_bias() if
self.rel_pos_bias is not None else None`, the bias the module returns held permuted, then each block handed
`shared_rel_pos_bias=rel_pos_bias`): the conversion to the layout the block takes lets None through (the port
raised "'NoneType' object has no attribute 'shape'" when the model was built without the shared bias); both
choices match torch."""

import numpy as np
import pytest

from tests.passes.snippet_ports import assert_built_matches_torch
from tests.rules.op_ports import port

MODEL = '''
import torch
from torch import nn


class SharedBias(nn.Module):
    def __init__(self, tokens=5, heads=2):
        super().__init__()
        self.table = nn.Parameter(torch.randn(tokens, tokens, heads))

    def forward(self):
        return self.table.permute(2, 0, 1).contiguous()  # heads, tokens, tokens


class Attention(nn.Module):
    def __init__(self, dim=4, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, shared_bias=None):
        B, N, C = x.shape
        q, k, v = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        attn = q @ k.transpose(-2, -1)
        if shared_bias is not None:
            attn = attn + shared_bias
        return self.proj((attn.softmax(-1) @ v).transpose(1, 2).reshape(B, N, C))


class Block(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = Attention(dim)

    def forward(self, x, shared_bias=None):
        return x + self.attn(self.norm(x), shared_bias=shared_bias)


class Net(nn.Module):
    def __init__(self, shared=True, depth=2):
        super().__init__()
        self.embed = nn.Linear(3, 4)
        self.bias = SharedBias() if shared else None
        self.blocks = nn.ModuleList([Block() for _ in range(depth)])

    def forward(self, x):
        x = self.embed(x)
        bias = self.bias() if self.bias is not None else None
        for block in self.blocks:
            x = block(x, shared_bias=bias)
        return x
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return port(tmp_path_factory.mktemp("optional_held"), MODEL, input_specs=("5,3",))


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("batch", [1, 3])
def test_an_optional_bias_held_permuted_matches_torch_present_or_not(pair, shared, batch):
    x = np.random.default_rng(batch).standard_normal((batch, 5, 3)).astype(np.float32)
    assert_built_matches_torch(pair, x, shared=shared)
