"""Property tests of the einops rules (porter/rules/einops.py, runtime porter/runtime/einops.py) against real
einops on torch: `rearrange` / `reduce` / `repeat` on the channels-last output of a Conv2d (the pattern is
rewritten for the Keras layout, no tensor is transposed), on torch-ordered sequences, with `...`, `1` and `()`,
inside a lambda mapped over tensors, einops' `einsum`, and the `Rearrange` / `Reduce` layers in a Sequential.
Shapes are drawn by hypothesis, batch 1 and odd sizes included."""

import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.harness import PortedPair, count_transposes
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

pytest.importorskip("einops")

CONV_MODEL = '''
import einops
import torch
import torch.nn as nn
from einops import rearrange, reduce, repeat


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        {op}
        return y
'''

# op -> (statement on the Conv2d output `y` (N, 6, H, W), Transposes in the traced graph: the input's conversion,
# the one a pattern that reorders axes needs, and the output's when the result stays channels-last)
CONV_OPS = {
    "tokens": ("y = rearrange(y, 'b c h w -> b (h w) c')", 1),
    "channel_shuffle": ("y = rearrange(y, 'b (g c) h w -> b (c g) h w', g=2) * 2.0", 3),
    "space_to_depth": ("y = rearrange(y, 'b c (h p) (w q) -> b (c p q) h w', p=2, q=2)", 3),
    "pool_max": ("y = reduce(y, 'b c h w -> b c', 'max')", 1),
    "pool_mean_keep": ("y = reduce(y, 'b c h w -> b c () ()', 'mean')", 2),
    "sum_over_channels": ("y = einops.reduce(y, 'b c h w -> b h w', 'sum')", 1),
    "repeat_new_axis": ("y = repeat(y, 'b c h w -> b c h w r', r=3)", 2),
    "ellipsis_flatten": ("y = rearrange(y, 'b ... -> b (...)')", 2),
    "width_first": ("y = rearrange(y, 'b c h w -> b w h c')", 3),
}


def conv_model(op):
    return textwrap.dedent(CONV_MODEL).replace("{op}", op)


@pytest.fixture(scope="module")
def conv_ported(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), conv_model(CONV_OPS[name][0])))


@pytest.mark.parametrize("name", sorted(CONV_OPS))
@settings(max_examples=12, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([2, 4, 6]), width=st.sampled_from([2, 4, 8]),
       seed=st.integers(0, 2**16))
def test_einops_on_channels_last_matches_einops(conv_ported, name, batch, height, width, seed):
    pair = conv_ported(name)
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pair, [x], tolerance=1e-6, what=f"{name} x{x.shape}")


@pytest.mark.parametrize("name", sorted(CONV_OPS))
def test_einops_on_channels_last_runs_on_that_layout(conv_ported, name):
    """The pattern is rewritten for the Keras tensor: only the boundary conversions (and ones a pattern needs)."""
    pair = conv_ported(name)
    x = random_input(0, (2, 3, 4, 4))
    assert count_transposes(pair.keras_model, [x]) <= CONV_OPS[name][1]
    assert_same_outputs(pair, [x], tolerance=1e-6, what=f"{name} under XLA", jit=True)


LAYER_MODEL = '''
import torch
import torch.nn as nn
from einops.layers.torch import Rearrange, Reduce


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.op = {op}
        self.after = {after}

    def forward(self, x):
        return self.after(self.op(self.conv(x)))
'''

# name -> (einops layer after the Conv2d, the module after it, Transposes traced: the input's conversion, the one a
# pattern that reorders axes needs, and the output's when the result stays channels-last). A literal pattern that
# keeps the image or pools it to its channels reads the conv's channels-last output where it lies.
LAYER_OPS = {
    "pool_head": ("Reduce('b c h w -> b c', 'mean')", "nn.Linear(8, 5)", 1),
    "pool_head_in_sequential": ("nn.Sequential(Reduce('b c h w -> b c', 'max'), nn.LayerNorm(8), nn.Linear(8, 5))",
                                "nn.Identity()", 1),
    "space_to_depth": ("Rearrange('b c (h p1) (w p2) -> b (c p1 p2) h w', p1=2, p2=2)", "nn.Conv2d(32, 4, 1)", 3),
    "channel_shuffle": ("Rearrange('b (g c) h w -> b (c g) h w', g=2)", "nn.BatchNorm2d(8)", 3),
}


@pytest.fixture(scope="module")
def layer_ported(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), textwrap.dedent(LAYER_MODEL).replace(
        "{op}", LAYER_OPS[name][0]).replace("{after}", LAYER_OPS[name][1])))


@pytest.mark.parametrize("name", sorted(LAYER_OPS))
@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([2, 4, 6]), width=st.sampled_from([2, 4, 8]),
       seed=st.integers(0, 2**16))
def test_einops_layers_on_channels_last_match_torch(layer_ported, name, batch, height, width, seed):
    pair = layer_ported(name)
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} x{x.shape}")


@pytest.mark.parametrize("name", sorted(LAYER_OPS))
def test_einops_layers_on_channels_last_run_on_that_layout(layer_ported, name):
    pair = layer_ported(name)
    x = random_input(0, (2, 3, 4, 4))
    assert count_transposes(pair.keras_model, [x]) <= LAYER_OPS[name][2]
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} under XLA", jit=True)


SEQUENCE_MODEL = '''
import torch
import torch.nn as nn
from einops import einsum, rearrange, repeat
from einops.layers.torch import Rearrange, Reduce


class Attention(nn.Module):
    def __init__(self, dim=12, heads=3):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=self.heads), (q, k, v))
        attn = einsum(q, k, "b h i d, b h j d -> b h i j").softmax(dim=-1)
        out = einsum(attn, v, "b h i j, b h j d -> b h i d")
        return self.out(rearrange(out, "b h n d -> b n (h d)"))


class PatchViT(nn.Module):
    def __init__(self, patch=2, dim=12, classes=5):
        super().__init__()
        self.to_tokens = nn.Sequential(
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch, p2=patch),
            nn.Linear(3 * patch * patch, dim),
        )
        self.cls = nn.Parameter(torch.randn(1, 1, dim))
        self.attn = Attention(dim)
        self.head = nn.Sequential(Reduce("b n d -> b d", "mean"), nn.Linear(dim, classes))

    def forward(self, img):
        x = self.to_tokens(img)
        cls = repeat(self.cls, "1 1 d -> b 1 d", b=x.shape[0])
        x = torch.cat([cls, x], dim=1)
        x = x + self.attn(x)
        return self.head(x)
'''


@pytest.fixture(scope="module")
def vit(tmp_path_factory):
    return port(tmp_path_factory.mktemp("einops_vit"), textwrap.dedent(SEQUENCE_MODEL), input_specs=("3,8,8",))


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_einops_vit_with_layers_lambda_and_einsum_matches_einops(vit, batch, seed):
    x = random_input(seed, (batch, 3, 8, 8))
    assert_same_outputs(vit, [x], tolerance=1e-5, what=f"einops ViT batch {batch}")


def test_einops_vit_compiles_with_xla_and_needs_no_einops(vit):
    x = random_input(1, (2, 3, 8, 8))
    assert_same_outputs(vit, [x], tolerance=1e-5, what="einops ViT under XLA", jit=True)
    assert count_transposes(vit.keras_model, [x]) <= 6  # the attention's own head rearranges
    text = vit.keras_module.__loader__.get_source(vit.keras_module.__name__)
    assert "import einops" not in text and "from einops" not in text


@pytest.mark.parametrize("pattern, kwargs, shape", [
    ("b 1 c -> b c", {}, (2, 1, 5)),
    ("b c -> b c () ()", {}, (3, 4)),
    ("b ... c -> b c ...", {}, (2, 3, 5, 4)),
    ("(b1 b2) n -> b1 b2 n", {"b1": 2}, (6, 3)),
])
def test_rearrange_edge_patterns_match_einops(pattern, kwargs, shape):
    import einops
    import numpy as np

    from porter.runtime.einops import einops_rearrange

    x = random_input(0, shape)
    np.testing.assert_array_equal(einops_rearrange(x, pattern, **kwargs).numpy(), einops.rearrange(x, pattern,
                                                                                                    **kwargs))


def test_rearrange_errors_name_the_pattern():
    from porter.runtime.einops import einops_rearrange

    with pytest.raises(ValueError, match="missing on the right"):
        einops_rearrange(random_input(0, (2, 3)), "a b -> a")
    with pytest.raises(ValueError, match="names 3 axes"):
        einops_rearrange(random_input(0, (2, 3)), "a b c -> a b c")


SIMPLE_VIT = Path(__file__).resolve().parent / "simple_vit.py"
SIMPLE_VIT_ARGS = {"image_size": 16, "patch_size": 4, "num_classes": 5, "dim": 32, "depth": 2, "heads": 4,
                   "mlp_dim": 64, "dim_head": 8}


@pytest.fixture(scope="module")
def simple_vit(tmp_path_factory):
    import json

    folder = tmp_path_factory.mktemp("simple_vit")
    path = folder / "simple_vit.py"
    path.write_text(SIMPLE_VIT.read_text())
    conversion = convert(ConvertOptions(path, folder / "out", input_specs=["3,16,16"], init_args=SIMPLE_VIT_ARGS))
    assert conversion.exit_code == 0
    write_tree(folder / "out", conversion.files)
    assert json.loads((folder / "out" / "porter-manifest.json").read_text())["init_args"] == SIMPLE_VIT_ARGS
    return PortedPair(folder / "out")


@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_simple_vit_matches_torch(simple_vit, batch, seed):
    assert_same_outputs(simple_vit, [random_input(seed, (batch, 3, 16, 16))], tolerance=1e-5,
                        what=f"SimpleViT batch {batch}")


def test_simple_vit_compiles_with_xla_and_keeps_its_dtypes(simple_vit):
    assert_same_outputs(simple_vit, [random_input(2, (2, 3, 16, 16))], tolerance=1e-5, what="SimpleViT XLA",
                        jit=True)
    text = simple_vit.keras_module.__loader__.get_source(simple_vit.keras_module.__name__)
    assert "dtype=tf.float32" in text  # the helper's `dtype=torch.float32` default
    assert "tf.cast(self.pos_embedding, x.dtype)" in text  # `.to(device, dtype=x.dtype)` on a plain attribute
