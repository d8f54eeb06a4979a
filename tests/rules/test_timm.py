"""timm's helpers (porter/rules/timm.py, runtime porter/runtime/timm.py) against real timm: a DeiT-style model that
imports DropPath, drop_path, to_2tuple and trunc_normal_ (from `timm.layers` and the older `timm.models.layers`)
converts and matches torch in inference for hypothesis-drawn batches; DropPath in training keeps or drops whole
samples as timm does; `to_2tuple` and `trunc_normal_` behave as timm's."""

import math
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.torchvision_support import import_torchvision
from tests.rules.op_ports import assert_same_outputs, port, random_input

import_torchvision()  # timm imports torchvision, whose compiled ops need their schemas registered first
pytest.importorskip("timm")

MODEL = '''
import torch
import torch.nn as nn
from timm.layers import DropPath, trunc_normal_, to_2tuple
from timm.models.layers import drop_path


class PatchEmbed(nn.Module):
    def __init__(self, img_size=8, patch_size=2, in_chans=3, embed_dim=16):
        super().__init__()
        img_size, patch_size = to_2tuple(img_size), to_2tuple(patch_size)
        self.num_patches = (img_size[0] // patch_size[0]) * (img_size[1] // patch_size[1])
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class Block(nn.Module):
    def __init__(self, dim, drop_path_rate=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.drop_path = DropPath(drop_path_rate) if drop_path_rate > 0.0 else nn.Identity()
        self.rate = drop_path_rate

    def forward(self, x):
        x = x + self.drop_path(self.mlp(self.norm(x)))
        return x + drop_path(self.mlp(self.norm(x)), self.rate, self.training)


class TinyDeiT(nn.Module):
    def __init__(self, num_classes=5, embed_dim=16, depth=3):
        super().__init__()
        self.patch_embed = PatchEmbed(embed_dim=embed_dim)
        self.pos_embed = nn.Parameter(torch.zeros(1, self.patch_embed.num_patches, embed_dim))
        self.blocks = nn.Sequential(*[Block(embed_dim, 0.1 * i) for i in range(depth)])
        self.head = nn.Linear(embed_dim, num_classes)
        trunc_normal_(self.pos_embed, std=0.02)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            trunc_normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.patch_embed(x) + self.pos_embed
        x = self.blocks(x)
        return self.head(x.mean(dim=1))
'''


@pytest.fixture(scope="module")
def deit(tmp_path_factory):
    return port(tmp_path_factory.mktemp("deit"), textwrap.dedent(MODEL), input_specs=("3,8,8",))


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_timm_model_matches_torch_in_inference(deit, batch, seed):
    x = random_input(seed, (batch, 3, 8, 8))
    assert_same_outputs(deit, [x], tolerance=1e-5, what=f"DeiT batch {batch}")
    text = deit.keras_module.__loader__.get_source(deit.keras_module.__name__)
    assert "import timm" not in text and "from timm" not in text


def test_timm_model_compiles_with_xla(deit):
    assert_same_outputs(deit, [random_input(3, (2, 3, 8, 8))], tolerance=1e-5, what="DeiT under XLA", jit=True)


@settings(max_examples=20, deadline=None)
@given(batch=st.integers(1, 6), rate=st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]), scale=st.booleans(),
       seed=st.integers(0, 2**16))
def test_drop_path_keeps_or_drops_whole_samples_as_timm(batch, rate, scale, seed):
    import torch
    from timm.layers import drop_path as timm_drop_path

    from porter.runtime.timm import DropPath, drop_path

    x = random_input(seed, (batch, 3, 4, 5)) + 3.0  # no zero entries: a dropped sample is all zeros
    out = np.asarray(drop_path(x, rate, True, scale))
    keep = 1.0 - rate
    expected_kept = x / keep if (scale and keep > 0) else x
    for sample in range(batch):
        kept = np.allclose(out[sample], expected_kept[sample], rtol=1e-6)
        assert kept or np.all(out[sample] == 0.0), f"sample {sample} neither kept nor dropped"
    reference = timm_drop_path(torch.from_numpy(x), rate, True, scale).numpy()
    if rate in (0.0, 1.0):  # deterministic in timm too
        np.testing.assert_allclose(out, reference)
    layer = DropPath(rate, scale_by_keep=scale)
    np.testing.assert_array_equal(np.asarray(layer(x, training=False)), x)  # inference: identity


def test_drop_path_drops_at_its_rate():
    from porter.runtime.timm import drop_path

    out = np.asarray(drop_path(np.ones((4000, 2), np.float32), 0.3, True))
    dropped = float(np.mean(out[:, 0] == 0.0))
    assert abs(dropped - 0.3) < 0.03
    assert np.allclose(out[out != 0.0], 1.0 / 0.7)


@pytest.mark.parametrize("value", [3, (2, 5), [4, 4], "ab", 0.5])
def test_to_2tuple_matches_timm(value):
    from timm.layers import to_2tuple as timm_to_2tuple

    from porter.runtime.timm import to_2tuple, to_ntuple

    assert to_2tuple(value) == timm_to_2tuple(value)
    assert to_ntuple(3)(7) == (7, 7, 7)


@pytest.mark.parametrize("mean, std, a, b", [(0.0, 0.02, -2.0, 2.0), (0.0, 1.0, -2.0, 2.0), (1.0, 2.0, 0.0, 1.5)])
def test_trunc_normal_is_the_truncated_distribution(mean, std, a, b):
    """Same law as torch.nn.init.trunc_normal_ (compared by moments and bounds; no mass piled at the bounds)."""
    import keras
    import torch

    from porter.runtime.helpers import init_trunc_normal

    variable = keras.Variable(np.zeros((200, 100), np.float32))
    ours = np.asarray(init_trunc_normal(variable, mean, std, a, b)).ravel()
    theirs = torch.nn.init.trunc_normal_(torch.empty(200, 100), mean, std, a, b).numpy().ravel()
    assert ours.min() >= a and ours.max() <= b
    assert np.mean(np.isclose(ours, a) | np.isclose(ours, b)) < 0.001
    spread = theirs.std() / math.sqrt(ours.size)
    assert abs(ours.mean() - theirs.mean()) < 8 * spread
    assert abs(ours.std() - theirs.std()) < 0.05 * theirs.std()
