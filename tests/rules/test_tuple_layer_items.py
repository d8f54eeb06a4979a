"""Tuple-output layers whose rule says what their items are (registry `items`): the first item of nn.MultiheadAttention,
nn.LSTM, nn.GRU and nn.RNN has the rank of the input, so the ops after `layer(x)[0]` (or `out, _ = layer(x)`) know
it: attention tokens folded back into an image (`t.transpose(1, 2).reshape(B, C, H, W)`) stay where they lie on a
channels-last image (a Transpose there and one after, before), a recurrent output's last step is read on its axis.
Compared with torch on drawn sizes, eagerly and under XLA."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.verify.harness import count_transposes
from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

IMAGE_MODEL = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.out = nn.Conv2d(8, 4, 3, stride=2, padding=1)

    def forward(self, x):
        x = self.conv(x)
        B, C, H, W = x.shape
        t = x.flatten(2).transpose(1, 2)
        {attend}
        return self.out(t.transpose(1, 2).reshape(B, C, H, W))
'''
ATTENDS = {
    "item": "t = t + self.attn(t, t, t, need_weights=False)[0]",
    "unpacked": "a, weights = self.attn(t, t, t)\n        t = t * torch.sigmoid(a)",
}

SEQUENCE_MODEL = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.{layer}(3, 5, batch_first=True)
        self.head = nn.Linear(5, 2)

    def forward(self, x):
        out = self.rnn(x)[0]
        return self.head(out[:, -1]) + out.mean(1).sum(-1, keepdim=True)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    sources = {name: textwrap.dedent(IMAGE_MODEL).replace("{attend}", attend) for name, attend in ATTENDS.items()}
    sources.update({layer: textwrap.dedent(SEQUENCE_MODEL).replace("{layer}", layer) for layer in ("LSTM", "GRU",
                                                                                                   "RNN")})
    specs = {layer: ("6,3",) for layer in ("LSTM", "GRU", "RNN")}
    return cached(lambda name: port(tmp_path_factory.mktemp(name), sources[name], specs.get(name, ("3,8,8",))))


@pytest.mark.parametrize("name", sorted(ATTENDS))
@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), height=st.sampled_from([1, 3, 4]), width=st.sampled_from([2, 5]),
       seed=st.integers(0, 2**16))
def test_attention_tokens_folded_back_match_torch(ported, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(ported(name), [x], what=f"{name} x{x.shape}")
    assert_same_outputs(ported(name), [x], what=f"{name} XLA x{x.shape}", jit=True)


@pytest.mark.parametrize("name", sorted(ATTENDS))
def test_attention_tokens_fold_back_where_they_lie(ported, name):
    x = random_input(0, (2, 3, 6, 5))
    assert count_transposes(ported(name).keras_model, [x]) == 2  # the boundary's: in, and the image out


@pytest.mark.parametrize("layer", ["LSTM", "GRU", "RNN"])
@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), steps=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_recurrent_output_item_matches_torch(ported, layer, batch, steps, seed):
    x = random_input(seed, (batch, steps, 3))
    assert_same_outputs(ported(layer), [x], what=f"{layer} x{x.shape}")
    assert_same_outputs(ported(layer), [x], what=f"{layer} XLA x{x.shape}", jit=True)
