"""Sequence-first blocks reached every way a model reaches them (torchaudio's Conformer, speech and text encoders):
batch-first tokens `x.transpose(0, 1)` handed to blocks in a ModuleList's loop, or called one by one, each block a
feed-forward `nn.Sequential` opening with its own `nn.LayerNorm`, a LayerNorm and a sequence-first
`nn.MultiheadAttention` called by keyword (`query=y, key=y, value=y`), and a convolution module that takes the
tokens back batch-first (`x.transpose(0, 1)`), runs a Conv1d/GLU/BatchNorm1d stack on `x.transpose(1, 2)` and hands
them back. A block's translation for the tokens as they lie (the transpose left pending) is kept where it moves no
more data than one in torch's order (passes/classes.py `first_translation`): here none at all. The runtime's
Sequential tells a LayerNorm child the held order and runs a Linear where the last dim is stored last.

Before: 8 Transposes for the Conformer-style pair, 2 for a ModuleList of attention blocks; now 0. Ports match torch
at drawn batch sizes and lengths, eagerly and under XLA. A block built with a literal flag (`conv_first=False`, a
case of `call` chosen by the instance's attribute) takes the tokens as the generic call does: the ModuleList's
blocks built with a variable flag run that case too."""

import numpy as np
import pytest
import tensorflow as tf
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.runtime.base import load_state_dict
from porter.runtime.linear import Identity, Linear
from porter.runtime.module import Sequential
from porter.runtime.norm import LayerNorm
from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import assert_built_matches_torch, snippet_ports
from tests.rules.op_ports import assert_same_outputs

SOURCE = '''
import torch
import torch.nn as nn


class FeedForward(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.SiLU(), nn.Dropout(0.0), nn.Linear(2 * d, d))

    def forward(self, x):
        return self.net(x)


class ConvModule(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.convs = nn.Sequential(nn.Conv1d(d, 2 * d, 1), nn.GLU(dim=1), nn.Conv1d(d, d, 3, padding=1, groups=d),
                                   nn.BatchNorm1d(d), nn.SiLU(), nn.Conv1d(d, d, 1))

    def forward(self, x):
        x = self.norm(x)
        x = x.transpose(1, 2)
        x = self.convs(x)
        return x.transpose(1, 2)


class ConformerBlock(nn.Module):
    def __init__(self, d, heads, conv_first=False):
        super().__init__()
        self.ff = FeedForward(d)
        self.norm = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads)
        self.conv = ConvModule(d)
        self.final = nn.LayerNorm(d)
        self.conv_first = conv_first

    def _convolve(self, x):
        residual = x
        x = x.transpose(0, 1)
        x = self.conv(x)
        x = x.transpose(0, 1)
        return residual + x

    def forward(self, x):
        x = x + 0.5 * self.ff(x)
        if self.conv_first:
            x = self._convolve(x)
        y = self.norm(x)
        y, _ = self.attn(query=y, key=y, value=y, need_weights=False)
        x = x + y
        if not self.conv_first:
            x = self._convolve(x)
        return self.final(x)


class AttentionBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        y = self.norm(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        return x + self.mlp(x)


class Net(nn.Module):
    def __init__(self, kind="conformer", conv_first=False):
        super().__init__()
        self.kind = kind
        if kind == "conformer":
            self.blocks = nn.ModuleList([ConformerBlock(16, 2, conv_first=conv_first) for _ in range(2)])
        elif kind == "direct":
            self.b1 = ConformerBlock(16, 2, conv_first=False)
            self.b2 = ConformerBlock(16, 2, conv_first=True)
        else:
            self.blocks = nn.ModuleList([AttentionBlock(16, 2) for _ in range(2)])

    def forward(self, x):
        x = x.transpose(0, 1)
        if self.kind == "direct":
            x = self.b2(self.b1(x))
        else:
            for block in self.blocks:
                x = block(x)
        return x.transpose(0, 1)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return snippet_ports(tmp_path_factory, SOURCE, "7,16", "kind")


@pytest.mark.parametrize("kind", ["conformer", "direct", "loop"])
@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_sequence_first_blocks_run_on_the_tokens_where_they_lie(ported, kind, batch, length, seed):
    pair = PortedPair(ported(kind), seed=batch)
    x = np.random.default_rng(seed).standard_normal((batch, length, 16)).astype("float32")
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
    assert count_transposes(pair.keras_model, [x]) == 0


@pytest.mark.parametrize("conv_first", [False, True])
def test_blocks_built_with_a_variable_flag_run_the_literal_case_as_the_generic_call_does(ported, conv_first):
    """The literal `conv_first=False` of kind "direct" makes a case of `call`; the ModuleList's blocks, built with the
    variable `conv_first`, hold the same value and run it, handed the tokens as the generic call takes them."""
    pair = PortedPair(ported("conformer"), seed=3)
    x = np.random.default_rng(5).standard_normal((2, 5, 16)).astype("float32")
    torch.manual_seed(0)
    assert_built_matches_torch(pair, x, tolerance=1e-4, kind="conformer", conv_first=conv_first)


@settings(max_examples=10, deadline=None)
@given(sizes=st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 6)), seed=st.integers(0, 99))
def test_runtime_sequential_tells_a_layer_norm_the_held_order_and_runs_a_linear_as_it_lies(sizes, seed):
    """(T, N, E) tokens held (N, T, E): Sequential(LayerNorm, Linear) given `layout="permuted:1,0,2"` moves nothing
    and matches torch's modules on torch's order."""
    x = np.random.default_rng(seed).standard_normal(sizes).astype("float32")
    norm, linear = torch.nn.LayerNorm(sizes[-1]), torch.nn.Linear(sizes[-1], 3)
    with torch.no_grad():
        torch.nn.init.normal_(norm.weight)
        expected = linear(norm(torch.from_numpy(x))).numpy()
    seq = Sequential(LayerNorm(sizes[-1]), Linear(sizes[-1], 3))
    load_state_dict(seq, {f"0.{k}": v.detach().numpy() for k, v in norm.state_dict().items()} |
                    {f"1.{k}": v.detach().numpy() for k, v in linear.state_dict().items()})
    held = tf.constant(np.transpose(x, [1, 0, 2]))
    got = seq(held, layout="permuted:1,0,2", layout_out="permuted:1,0,2")
    np.testing.assert_allclose(np.transpose(np.asarray(got), [1, 0, 2]), expected, atol=1e-5)


def test_call_module_brings_a_result_returned_before_its_permute_to_the_callers_order():
    """A block that takes torch's order and returns its result before a permute (`layout_out` permuted: a case of
    `call` of torchvision MaxViT's SwapAxes), run by `call_module`, hands the caller torch's order."""
    from porter.runtime.module import call_module

    class SwappedOut(Identity):
        porter_layout, layout_out = "source", "permuted:1,0,2"

    x = np.arange(24, dtype="float32").reshape(2, 3, 4)  # held (3, 2, 4) by the block: torch's (2, 3, 4)
    np.testing.assert_array_equal(np.asarray(call_module(SwappedOut(), tf.constant(x))), np.transpose(x, [1, 0, 2]))
