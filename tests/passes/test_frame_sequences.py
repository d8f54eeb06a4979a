"""A sequence of frames a loop rebuilds layer by layer (ConvLSTM-style video models: `outs.append(conv(x[:, t]))`
per frame, then `x = torch.stack(outs, dim=1)` fed to the next layer): the stack of channels-last images is held
(B, H, W, T, C), and the loop converted it back to torch's order at the end of every layer and each frame to
channels-last again (10 Transposes for two layers of four frames). The frames now enter the loop held as the stack
leaves them, moved once before it (statements.py `_loop_entries`): each `x[:, t]` is an image as it lies. Compared
with torch for hypothesis-drawn sizes and frame counts, batch 1 included."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus.test_torchvision import xla_transposes
from tests.rules.op_ports import assert_same_outputs, port_cache, random_input

SOURCE = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1)])

    def forward(self, video):
        x = video
        for conv in self.convs:
            outs = []
            for t in range(x.size(1)):
                outs.append(torch.tanh(conv(x[:, t])))
            x = torch.stack(outs, dim=1)
        return x[:, -1] + x.mean(1)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    return port_cache(tmp_path_factory, {"frames": SOURCE}, input_specs=("4,3,9,11",))


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 2), height=st.integers(3, 11), width=st.integers(3, 11), seed=st.integers(0, 2**16))
def test_frames_rebuilt_by_layer_match_torch(ported, batch, height, width, seed):
    x = random_input(seed, (batch, 4, 3, height, width))
    assert_same_outputs(ported("frames"), [x], tolerance=1e-4)


def test_frames_move_once(ported):
    pair = ported("frames")
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 4, 3, 9, 11))) <= 2  # (was 10)


INPUT_FRAMES = '''
import torch
import torch.nn as nn


class ConvLSTMCell(nn.Module):
    def __init__(self, cin, hidden):
        super().__init__()
        self.conv = nn.Conv2d(cin + hidden, 4 * hidden, 3, padding=1)

    def forward(self, x, state):
        h, c = state
        i, f, o, g = torch.chunk(self.conv(torch.cat([x, h], dim=1)), 4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


class Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, c, 3, 2, 1), nn.BatchNorm2d(c), nn.ReLU(), nn.AdaptiveAvgPool2d(1))

    def forward(self, x):
        return self.body(x).flatten(1)


class Net(nn.Module):
    def __init__(self, hidden=6):
        super().__init__()
        self.hidden = hidden
        self.cell = ConvLSTMCell(3, hidden)
        self.encoder = Encoder(hidden)
        self.rnn = nn.GRU(hidden, 5, batch_first=True)

    def forward(self, video):
        b, t, _, height, width = video.shape
        h = torch.zeros(b, self.hidden, height, width)
        c = torch.zeros(b, self.hidden, height, width)
        feats = []
        for step in range(t):
            frame = video[:, step]
            h, c = self.cell(frame, (h, c))
            feats.append(self.encoder(video[:, step]))
        out, _ = self.rnn(torch.stack(feats, dim=1))
        return out[:, -1] + h.mean(dim=(1, 2, 3)).unsqueeze(1)
'''


@pytest.fixture(scope="module")
def input_frames(tmp_path_factory):
    return port_cache(tmp_path_factory, {"input_frames": INPUT_FRAMES}, input_specs=("4,3,9,11",))


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 2), frames=st.integers(1, 5), height=st.integers(3, 11), width=st.integers(3, 11),
       seed=st.integers(0, 2**16))
def test_frames_of_the_input_match_torch(input_frames, batch, frames, height, width, seed):
    x = random_input(seed, (batch, frames, 3, height, width))
    assert_same_outputs(input_frames("input_frames"), [x], tolerance=1e-4)


def test_frames_of_the_input_move_once(input_frames):
    """The model's (B, T, C, H, W) input read only as frames `video[:, t]` handed to a ConvLSTM cell and a CNN
    encoder (passes/frame_inputs.py): moved once before the loop, not each frame on its own (4 -> 1 for four
    frames)."""
    pair = input_frames("input_frames")
    pair.build()
    assert xla_transposes(pair.keras_model, random_input(0, (2, 4, 3, 9, 11))) <= 1
