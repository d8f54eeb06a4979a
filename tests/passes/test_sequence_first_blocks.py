"""Transformer blocks written sequence-first (CLIP's `ResidualAttentionBlock`, older PyTorch tutorials): the tokens
are embedded batch-first, `x.permute(1, 0, 2)` hands them to blocks of `nn.LayerNorm`, a sequence-first
`nn.MultiheadAttention(y, y, y)` and an MLP `nn.Sequential`, and `x.permute(1, 0, 2)` takes them back. The permute
stays pending: the attention runs on query, key and value held batch-first (`swapped=True`), the LayerNorm is told
the order they are held in (`held=[1, 0, 2]`: its trailing dim is stored last), and the MLP's Linear/GELU
Sequential computes along the last axis where it lies. Blocks held in an `nn.Sequential` take the tokens so too
(the runtime's Sequential and `call_module` convert to any order a child declares). Before: 8 Transposes for two
blocks, 3 for a lone attention, 1 for the Sequential; now none. A LayerNorm over several trailing dims that are not stored last goes through torch's order (runtime
check). Ports match torch at batch 1 and 3, eagerly and under XLA."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.norm import LayerNorm
from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs

SOURCE = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, h)
        self.ln_1 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.ln_2 = nn.LayerNorm(d)

    def forward(self, x):
        y = self.ln_1(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 16)
        self.b1 = Block(16, 2)
        self.b2 = Block(16, 2)

    def forward(self, t):
        x = self.emb(t).permute(1, 0, 2)
        x = self.b2(self.b1(x))
        return x.permute(1, 0, 2).mean(1)


class PlainAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 16)
        self.attn = nn.MultiheadAttention(16, 2)

    def forward(self, t):
        x = self.emb(t).transpose(0, 1)
        y, _ = self.attn(x, x, x)
        return y.transpose(0, 1).mean(1)


class SequentialBlocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 16)
        self.blocks = nn.Sequential(Block(16, 2), Block(16, 2))

    def forward(self, t):
        x = self.emb(t).permute(1, 0, 2)
        x = self.blocks(x)
        return x.permute(1, 0, 2).mean(1)


class Net(nn.Module):
    def __init__(self, kind="blocks"):
        super().__init__()
        if kind == "blocks":
            self.model = Blocks()
        elif kind == "plain":
            self.model = PlainAttention()
        else:
            self.model = SequentialBlocks()

    def forward(self, t):
        return self.model(t)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return snippet_ports(tmp_path_factory, SOURCE, "6:int64:0:30", "kind")


@pytest.mark.parametrize("kind", ["blocks", "plain", "sequential"])
@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_sequence_first_blocks_keep_the_tokens_where_they_lie(ported, kind, batch, length, seed):
    pair = PortedPair(ported(kind), seed=batch)
    tokens = np.random.default_rng(seed).integers(0, 30, (batch, length))
    assert_same_outputs(pair, [tokens], tolerance=1e-5)
    assert_same_outputs(pair, [tokens], tolerance=1e-5, jit=True)
    assert count_transposes(pair.keras_model, [tokens]) == 0


@settings(max_examples=10, deadline=None)
@given(sizes=st.lists(st.integers(1, 5), min_size=3, max_size=4), trailing=st.integers(1, 2), seed=st.integers(0, 99),
       data=st.data())
def test_layer_norm_told_any_held_order_matches_torch(sizes, trailing, seed, data):
    order = data.draw(st.permutations(range(len(sizes))))
    x = np.random.default_rng(seed).standard_normal(sizes).astype("float32")
    normalized = tuple(sizes[-trailing:])
    expected = torch.nn.LayerNorm(normalized)(torch.from_numpy(x)).detach().numpy()
    got = np.asarray(LayerNorm(normalized)(np.transpose(x, order), held=list(order)))
    np.testing.assert_allclose(np.transpose(got, np.argsort(order)), expected, atol=1e-5)


@pytest.mark.parametrize("normalized", [(5,), (4, 5)])
def test_layer_norm_told_the_held_order_matches_torch(normalized):
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype("float32")
    expected = torch.nn.LayerNorm(normalized)(torch.from_numpy(x)).detach().numpy()
    layer = LayerNorm(normalized)
    held = np.transpose(x, [1, 0, 2])  # (4, 3, 5): torch dims 1, 0, 2 stored in that order
    got = np.transpose(np.asarray(layer(held, held=[1, 0, 2])), [1, 0, 2])
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_runtime_sequential_converts_to_the_order_a_child_declares():
    import tensorflow as tf

    from porter.runtime.linear import Identity
    from porter.runtime.module import Sequential, call_module

    class Swapped(Identity):  # a block translated for tokens held batch-first, returning them so
        porter_layout = layout_out = "permuted:1,0,2"

    x = np.arange(24, dtype="float32").reshape(2, 3, 4)  # torch's (T, N, E)
    held = Sequential(Swapped())(x, layout="source", layout_out="source")
    np.testing.assert_array_equal(np.asarray(held), x)
    np.testing.assert_array_equal(np.asarray(call_module(Swapped(), tf.constant(x))), x)
