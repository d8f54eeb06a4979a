"""Rank-3 token tensors are not images: `x.transpose(1, 2)` of a (N, L, C) sequence is held as it lies (a
channels-last relabel) and a Linear on it contracts the tokens where they are stored, so MLP-Mixer's token mixing
(`mlp(norm(x).transpose(1, 2)).transpose(1, 2)`, a Sequential or a lone Linear) moves no data and the residual stream
stays in torch's order: the port traces only the entry's Transpose and matches torch. `F.linear(y, w, b)` on such a
tensor contracts the tokens where they lie the same way (3 Transposes before: the tokens to torch's order and back)."""

import pytest

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

MIXER = '''
import torch
import torch.nn.functional as F
from torch import nn


class MixerBlock(nn.Module):
    def __init__(self, tokens, dim, lone):
        super().__init__()
        self.lone = lone
        self.norm1 = nn.LayerNorm(dim)
        self.token_mix = nn.Sequential(nn.Linear(tokens, 8), nn.GELU(), nn.Linear(8, tokens))
        self.token_fc = nn.Linear(tokens, tokens)
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mix = nn.Sequential(nn.Linear(dim, 32), nn.GELU(), nn.Linear(32, dim))

    def forward(self, x):
        y = self.norm1(x).transpose(1, 2)
        if self.lone == "functional":
            y = F.linear(F.gelu(F.linear(y, self.token_fc.weight, self.token_fc.bias)), self.token_fc.weight)
        elif self.lone:
            y = self.token_fc(y)
        else:
            y = self.token_mix(y)
        x = x + y.transpose(1, 2)
        return x + self.channel_mix(self.norm2(x))


class Net(nn.Module):
    def __init__(self, lone=False, dim=16):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, 4, 4)
        self.blocks = nn.ModuleList([MixerBlock(16, dim, lone) for _ in range(2)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 5)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x).mean(dim=1))
'''


@pytest.mark.parametrize("lone", [False, True, "functional"])
def test_token_mixing_linear_runs_on_the_transposed_sequence(tmp_path, lone):
    pair = port(tmp_path, MIXER, input_specs=("3,16,16",), init_args={"lone": lone})
    x = random_input(3, (2, 3, 16, 16))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
    assert count_transposes(pair.keras_model, [x]) == 1  # the entry's (13 when the tokens were an image)


ATTENTION = '''
import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim=16, num_heads=2, fused=True):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.fused = fused
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
        if self.fused:
            x = F.scaled_dot_product_attention(q, k, v)
        else:
            attn = (q * self.scale) @ k.transpose(-2, -1)
            x = attn.softmax(dim=-1) @ v
        x = x.transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Net(nn.Module):
    def __init__(self, fused=True):
        super().__init__()
        self.attn = Attention(fused=fused)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        return x + self.attn(self.norm(x))
'''


@pytest.mark.parametrize("fused", [True, False])
def test_attention_paths_write_their_output_in_the_order_the_transpose_wants(tmp_path, fused):
    """`x.transpose(1, 2).reshape(B, N, C)` after an if/else of SDPA or the einsums written out: each path writes
    its (B, heads, N, head_dim) result as (B, N, heads, head_dim), so the transpose and the reshape move no data."""
    pair = port(tmp_path, ATTENTION, input_specs=("5,16",), init_args={"fused": fused})
    x = random_input(4, (2, 5, 16))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
    assert count_transposes(pair.keras_model, [x]) == 0  # (1 when the if/else's result was in torch's order)


NON_LOCAL = '''
import torch
import torch.nn.functional as F
from torch import nn


class NonLocal(nn.Module):
    def __init__(self, channels=8, inner=4):
        super().__init__()
        self.inner = inner
        self.theta = nn.Conv2d(channels, inner, 1)
        self.phi = nn.Conv2d(channels, inner, 1)
        self.g = nn.Conv2d(channels, inner, 1)
        self.out = nn.Conv2d(inner, channels, 1)

    def forward(self, x):
        b = x.size(0)
        theta = self.theta(x).view(b, self.inner, -1).permute(0, 2, 1)
        phi = self.phi(x).view(b, self.inner, -1)
        g = self.g(x).view(b, self.inner, -1).permute(0, 2, 1)
        y = torch.matmul(F.softmax(torch.matmul(theta, phi), dim=-1), g)
        y = y.permute(0, 2, 1).contiguous().view(b, self.inner, *x.size()[2:])
        return x + self.out(y)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.block = NonLocal()

    def forward(self, x):
        return self.block(self.stem(x))
'''


def test_view_with_starred_spatial_sizes_splits_the_tokens_where_they_lie(tmp_path):
    """`y.view(b, c, *x.size()[2:])` of a (N, C, H*W) held channels-last: the sizes after dim 1 are x's spatial
    sizes, so the view splits the tokens back into H, W and the image stays channels-last."""
    pair = port(tmp_path, NON_LOCAL, input_specs=("3,6,6",))
    x = random_input(5, (2, 3, 6, 6))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
    assert count_transposes(pair.keras_model, [x]) == 2  # the boundary's (4 when the view ran in torch's order)


SEQUENCE_FIRST = '''
import math
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, ntoken=50, d_model=16, nhead=2, batch_first=False, norm_first=False):
        super().__init__()
        self.embedding = nn.Embedding(ntoken, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, 32, 0.1, batch_first=batch_first, norm_first=norm_first)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.last = nn.TransformerEncoderLayer(d_model, nhead, 32, 0.1, batch_first=batch_first)
        self.d_model = d_model
        self.classifier = nn.Linear(d_model, 4)

    def forward(self, src):
        src = src.transpose(0, 1)
        x = self.embedding(src) * math.sqrt(self.d_model)
        x = self.last(self.encoder(x))
        return self.classifier(x.mean(dim=0))
'''


@pytest.mark.parametrize("init_args", [{}, {"norm_first": True}, {"batch_first": True}])
def test_sequence_first_encoder_runs_on_the_batch_first_tokens(tmp_path, init_args):
    """`src.transpose(0, 1)` of (N, S) token ids: the Embedding gathers them as they lie, (N, S, E) held for torch's
    (S, N, E), and the encoder runs on that told `swapped=True` (batch-first inside, or sequence-first for a
    batch_first layer handed a sequence-first tensor): no Transpose."""
    pair = port(tmp_path, SEQUENCE_FIRST, input_specs=("7:int64:0:50",), init_args=init_args)
    x = pair.example_inputs(batch=3, seed=6)
    assert_same_outputs(pair, x, tolerance=1e-5)
    assert_same_outputs(pair, x, tolerance=1e-5, jit=True)
    assert count_transposes(pair.keras_model, x) == 0  # (1 when the ids were transposed first)


LIBRARY_MIXER = '''
from functools import partial

import torch
from torch import nn


class PatchEmbed(nn.Module):
    def __init__(self, dim, flatten=True, output_fmt=None, device=None, dtype=None):
        super().__init__()
        if output_fmt is not None:
            self.flatten = False
        else:
            self.flatten = flatten
        self.proj = nn.Conv2d(3, dim, 4, 4, device=device, dtype=dtype)

    def forward(self, x):
        x = self.proj(x)
        if self.flatten:
            x = x.flatten(2).transpose(1, 2)
        return x


class Mlp(nn.Module):
    def __init__(self, features, hidden, norm_layer=None, use_conv=False, device=None, dtype=None):
        super().__init__()
        linear_layer = partial(nn.Conv2d, kernel_size=1) if use_conv else nn.Linear
        self.fc1 = linear_layer(features, hidden)
        self.act = nn.GELU()
        self.norm = norm_layer(hidden) if norm_layer is not None else nn.Identity()
        self.fc2 = linear_layer(hidden, features)

    def forward(self, x):
        return self.fc2(self.norm(self.act(self.fc1(x))))


class MixerBlock(nn.Module):
    def __init__(self, dim, tokens, mlp_layer=Mlp, norm_layer=nn.LayerNorm, device=None, dtype=None):
        super().__init__()
        dd = {'device': device, 'dtype': dtype}
        self.norm1 = norm_layer(dim, **dd)
        self.mlp_tokens = mlp_layer(tokens, 8, **dd)
        self.norm2 = norm_layer(dim, **dd)
        self.mlp_channels = mlp_layer(dim, 32, **dd)

    def forward(self, x):
        x = x + self.mlp_tokens(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.mlp_channels(self.norm2(x))


class Net(nn.Module):
    def __init__(self, dim=16, device=None, dtype=None):
        super().__init__()
        dd = {'device': device, 'dtype': dtype}
        self.stem = PatchEmbed(dim, **dd)
        self.blocks = nn.Sequential(*[MixerBlock(dim, 16, **dd) for _ in range(2)])
        self.head = nn.Linear(dim, 5)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean(dim=1))
'''


def test_library_style_mixer_keeps_its_tokens_in_place(tmp_path):
    """timm's style: layers built by factories handed in, `**dd` of a dict written in `__init__` (its keywords known,
    so PatchEmbed's `if self.flatten:` is decided per construction and the tokens have rank 3), an Mlp whose
    Linear is one of two layers (`partial(nn.Conv2d, kernel_size=1) if use_conv else nn.Linear`) taking the
    transposed tokens as they lie, and `.transpose(1, 2)` of what a module porter cannot type returned (its rank read
    at run time): only the entry's Transpose."""
    pair = port(tmp_path, LIBRARY_MIXER, input_specs=("3,16,16",))
    x = random_input(7, (2, 3, 16, 16))
    assert_same_outputs(pair, [x], tolerance=1e-5)
    assert_same_outputs(pair, [x], tolerance=1e-5, jit=True)
    assert count_transposes(pair.keras_model, [x]) == 1
