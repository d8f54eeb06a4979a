"""Speech encoders built the way torchaudio's wav2vec2 / HuBERT components are: a builder function appends conv
blocks to a local list in a loop over layer shapes and hands `nn.ModuleList(blocks)` to the extractor; each block's
norm is chosen by an if/elif inside that loop (a GroupNorm for the first block, a LayerNorm subclass that transposes
the channels last itself, or none); the transformer adds a positional convolution run on `x.transpose(-2, -1)`.

Three shared mechanisms (figures: Transposes of torchaudio's own components, tiny configs, before -> after): the
builder's constructions are read with the builder's own locals (the module-level view without them had made the
ModuleList empty: `call_module` and a conversion around every block, 6 -> 0); a module that is one of several known
ones (GroupNorm or the LayerNorm subclass) stays a set of alternatives, and a class among them that moves no data on
the image as its caller holds it is translated so (18 -> 0); a sequence whose channels and length swap before a
Conv1d prefers torch's order, where it is that layer's channels-last input (the transformer had taken its tokens
channels-last: 4 -> 0; the whole model 10 -> 0). Ports match torch at drawn batch sizes and lengths, eagerly and
under XLA."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import PortedPair, count_transposes
from tests.passes.snippet_ports import snippet_ports
from tests.rules.op_ports import assert_same_outputs

SOURCE = '''
import torch
import torch.nn as nn


class ChannelNorm(nn.LayerNorm):
    def forward(self, x):
        x = x.transpose(-2, -1)
        x = nn.functional.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.transpose(-2, -1)


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, kernel, stride, norm):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, kernel, stride=stride)
        self.norm = norm

    def forward(self, x):
        x = self.conv(x)
        if self.norm is not None:
            x = self.norm(x)
        return nn.functional.gelu(x)


class Extractor(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = blocks

    def forward(self, x):
        x = x.unsqueeze(1)
        for block in self.blocks:
            x = block(x)
        return x.transpose(1, 2)


def build_extractor(mode, shapes):
    blocks = []
    cin = 1
    for i, (cout, kernel, stride) in enumerate(shapes):
        norm = None
        if mode == "group" and i == 0:
            norm = nn.GroupNorm(cout, cout)
        elif mode == "layer":
            norm = ChannelNorm(cout)
        blocks.append(ConvBlock(cin, cout, kernel, stride, norm))
        cin = cout
    return Extractor(nn.ModuleList(blocks))


class PositionalConv(nn.Module):
    def __init__(self, dim, kernel):
        super().__init__()
        self.conv = nn.Conv1d(dim, dim, kernel, padding=kernel // 2, groups=2)
        self.trim = 1 if kernel % 2 == 0 else 0

    def forward(self, x):
        x = x.transpose(-2, -1)
        x = self.conv(x)
        if self.trim > 0:
            x = x[..., :-self.trim]
        x = nn.functional.gelu(x)
        return x.transpose(-2, -1)


class Encoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.pos = PositionalConv(dim, 4)
        self.norm = nn.LayerNorm(dim)
        self.layer = nn.TransformerEncoderLayer(dim, 2, 2 * dim, 0.0, batch_first=True)

    def forward(self, x):
        x = x + self.pos(x)
        return self.layer(self.norm(x))


class Net(nn.Module):
    def __init__(self, mode="group"):
        super().__init__()
        self.extractor = build_extractor(mode, [(8, 10, 5), (8, 3, 2), (8, 2, 2)])
        self.projection = nn.Linear(8, 16)
        self.encoder = Encoder(16)

    def forward(self, waveform):
        return self.encoder(self.projection(self.extractor(waveform)))
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return snippet_ports(tmp_path_factory, SOURCE, "400", "mode")


@pytest.mark.parametrize("mode", ["group", "layer", "none"])
@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 3), samples=st.integers(120, 420), seed=st.integers(0, 2**16))
def test_speech_encoder_runs_without_moving_data(ported, mode, batch, samples, seed):
    pair = PortedPair(ported(mode), seed=batch)
    waveform = np.random.default_rng(seed).standard_normal((batch, samples)).astype("float32")
    assert_same_outputs(pair, [waveform], tolerance=1e-4)
    assert_same_outputs(pair, [waveform], tolerance=1e-4, jit=True)
    assert count_transposes(pair.keras_model, [waveform]) == 0
