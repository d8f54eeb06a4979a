"""porter/runtime/einops.py's layers `Rearrange` / `Reduce` handed a tensor in either layout and asked for their
result in either: the same numbers as einops on torch, and no Transpose when the pattern's reorder is only the
layout's (a Conformer's `b n c -> b c n` before a channels-last Conv1d)."""

import numpy as np
import pytest
import tensorflow as tf
import torch
from einops import rearrange, reduce
from hypothesis import given
from hypothesis import strategies as st

from porter.runtime import einops as runtime
from porter.verify.compare import assert_equivalent

LAYOUTS = ("source", "channels_last")
# (pattern, reduction or None, input shape drawn as (b, c, n) / (b, c, h, w), axis lengths)
PATTERNS = (("b n c -> b c n", None, 3, {}), ("b c n -> b n c", None, 3, {}),
            ("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", None, 4, {"p1": 2, "p2": 2}),
            ("b (h w) c -> b c h w", None, 3, {"h": 2}), ("b c h w -> b c", "mean", 4, {}),
            ("b c h w -> b h w", "max", 4, {}), ("b c ... -> b ... c", None, 4, {}))


def to_layout(x, layout):
    return np.moveaxis(x, 1, -1) if layout == "channels_last" and x.ndim > 2 else x


@given(case=st.sampled_from(PATTERNS), layout=st.sampled_from(LAYOUTS), layout_out=st.sampled_from(LAYOUTS),
       sizes=st.lists(st.integers(1, 3), min_size=4, max_size=4), seed=st.integers(0, 2**16),
       compiled=st.booleans())
def test_einops_layers_take_and_give_either_layout(case, layout, layout_out, sizes, seed, compiled):
    pattern, reduction, rank, lengths = case
    shape = [sizes[0], *[2 * s for s in sizes[1:rank]]]
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    if reduction is None:
        layer = runtime.Rearrange(pattern, **lengths)
        expected = rearrange(torch.from_numpy(x), pattern, **lengths).numpy()
    else:
        layer = runtime.Reduce(pattern, reduction, **lengths)
        expected = reduce(torch.from_numpy(x), pattern, reduction, **lengths).numpy()
    if not layer.runs_in(layout):
        assert "..." in pattern and layout == "channels_last"
        return
    run = tf.function(layer, jit_compile=True) if compiled else layer
    got = run(to_layout(x, layout), layout=layout, layout_out=layout_out)
    assert_equivalent(to_layout(expected, layout_out), np.asarray(got))
    assert_equivalent(expected, np.asarray(layer(x)), what="alone: torch's order in and out")


@pytest.mark.parametrize("pattern", ["b n c -> b c n", "b c n -> b n c"])
def test_a_swap_that_is_the_layouts_own_moves_no_data(pattern):
    """`b n c -> b c n` written channels-last (and `b c n -> b n c` read channels-last) is no reorder at all."""
    layer = runtime.Rearrange(pattern)
    layout, layout_out = ("source", "channels_last") if pattern.startswith("b n") else ("channels_last", "source")
    graph = tf.function(lambda t: layer(t, layout=layout, layout_out=layout_out)).get_concrete_function(
        tf.TensorSpec((2, 5, 3), tf.float32)).graph
    assert not [op for op in graph.get_operations() if op.type == "Transpose"]


@pytest.mark.parametrize(("pattern", "held", "written"), [
    ("b n d -> b d n", "source", "channels_last"),  # a swap the layout makes: none written channels-last
    ("b d n -> b n d", "channels_last", "source"),
    ("b (h w) c -> b c h w", "source", "channels_last"),
    ("b n d -> b (n d)", "source", "source"),  # a reshape either way: the layout held
    ("b c ... -> b ... c", "source", "source"),  # (an ellipsis: read in torch's order only)
])
def test_free_layout_is_the_one_the_pattern_reaches_without_moving_data(pattern, held, written):
    assert runtime.Rearrange(pattern).free_layout(held) == written


def test_a_sequential_of_token_mixing_linears_between_rearranges_moves_no_data():
    """MLP-Mixer's token mixer `Sequential(LayerNorm, Rearrange('b n d -> b d n'), Linear(n, t), GELU, Linear(t, n),
    Rearrange('b d n -> b n d'))`: the first Rearrange writes channels-last (its swap is the layout's), the Linears
    contract the tokens where they lie, the second reads channels-last: the same numbers as torch, no Transpose."""
    from einops.layers.torch import Rearrange as TorchRearrange

    from porter.runtime.activation import GELU
    from porter.runtime.linear import Linear
    from porter.runtime.module import Sequential
    from porter.runtime.norm import LayerNorm

    torch.manual_seed(0)
    source = torch.nn.Sequential(torch.nn.LayerNorm(6), TorchRearrange("b n d -> b d n"), torch.nn.Linear(5, 7),
                                 torch.nn.GELU(), torch.nn.Linear(7, 5), TorchRearrange("b d n -> b n d"))
    port = Sequential(LayerNorm(6), runtime.Rearrange("b n d -> b d n"), Linear(5, 7), GELU(), Linear(7, 5),
                      runtime.Rearrange("b d n -> b n d"))
    for index in (0, 2, 4):
        for name, value in source[index].state_dict().items():
            getattr(port.items[index], name).assign(value.numpy())
    x = np.random.default_rng(1).standard_normal((3, 5, 6)).astype(np.float32)
    assert_equivalent(source(torch.from_numpy(x)).detach().numpy(), np.asarray(port(x)))
    graph = tf.function(port).get_concrete_function(tf.TensorSpec((3, 5, 6), tf.float32)).graph
    assert not [op for op in graph.get_operations() if op.type == "Transpose"]
