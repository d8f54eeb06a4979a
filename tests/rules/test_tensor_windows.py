"""Property tests of the `Tensor.unfold` rule (porter/rules/patches.py: windows of `size` every `step` along one
dim) against real torch. The dim, size and step are constructor arguments of the model, so one port serves every
draw: a Conv2d's channels-last output (converted back to torch's layout first; a negative dim too), torch's layout
(the model input), and an audio signal (N, T) framed into (N, frames, size) then projected by a Linear. Sizes are
drawn from the window itself upwards (one window, odd lengths, steps longer than the window), batch 1 included.
With literal dims on a channels-last image the windows are taken where the dim is stored (rows then columns:
6 -> 2 Transposes, the boundary's)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, forget_traces, port, random_input

HEADER = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self, dim=2, size=2, step=1):
        super().__init__()
        self.dim, self.size, self.step = dim, size, step
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.frame = nn.Linear(2, 3)

    def forward(self, x):
'''
OPS = {
    "channels_last_image": "return self.conv(x).unfold(self.dim, self.size, self.step) * 2.0",
    "torch_layout_input": "return x.unfold(self.dim, self.size, self.step)",
    "negative_dim": "return torch.relu(self.conv(x)).unfold(self.dim - 4, self.size, step=self.step)",
}
AUDIO = HEADER.replace("nn.Linear(2, 3)", "nn.Linear(size, 3)") + '''\
        frames = x.unfold(-1, self.size, self.step)
        return self.frame(frames)
'''


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    def make(name):
        if name == "audio":
            return port(tmp_path_factory.mktemp(name), AUDIO, input_specs=("16",))
        return port(tmp_path_factory.mktemp(name), HEADER + "        " + OPS[name] + "\n")

    return cached(make)


@pytest.mark.parametrize("name", sorted(OPS))
@given(batch=st.integers(1, 3), dim=st.integers(1, 3), size=st.integers(1, 3), step=st.integers(1, 5),
       extra=st.tuples(st.integers(0, 5), st.integers(0, 5)), seed=st.integers(0, 2**16))
def test_windows_of_an_image_match_torch(ported, name, batch, dim, size, step, extra, seed):
    pair = ported(name)
    for model in (pair.torch_model, pair.keras_model):
        model.dim, model.size, model.step = dim, size, step
    forget_traces(pair.keras_model)  # (the attributes are read as constants when traced)
    x = random_input(seed, (batch, 3, size + extra[0], size + extra[1]))  # (3 and 4 channels: a window fits)
    assert_same_outputs(pair, [x], tolerance=1e-6, what=f"{name} dim={dim} size={size} step={step} x{x.shape}")
    assert_same_outputs(pair, [x], tolerance=1e-6, what=f"{name} under XLA", jit=True)


@given(batch=st.integers(1, 3), step=st.integers(1, 5), length=st.integers(0, 13), seed=st.integers(0, 2**16))
def test_framed_audio_matches_torch(tmp_path_factory, batch, step, length, seed):
    pair = ported_audio(tmp_path_factory)
    pair.torch_model.step = pair.keras_model.step = step
    x = random_input(seed, (batch, 4 + length))
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"audio step={step} x{x.shape}")


_AUDIO = {}


def ported_audio(tmp_path_factory):
    """The audio model (window 4) ported once."""
    if "pair" not in _AUDIO:
        source = AUDIO.replace("dim=2, size=2, step=1", "dim=2, size=4, step=2")
        _AUDIO["pair"] = port(tmp_path_factory.mktemp("audio"), source, input_specs=("16",))
    return _AUDIO["pair"]


HELD = '''
import torch
import torch.nn as nn


class OpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        {op}
'''
HELD_OPS = {  # literal dims of a channels-last image: the windows taken where the dim is stored, no transpose
    "rows_then_columns": "return y.unfold(2, 2, 2).unfold(3, 2, 1).mean((-1, -2)) + y[:, :, :1, :1]",
    "channels": "return y.unfold(1, 2, 2).amax(-1)",
    "last_dim_kept": "return y.unfold(-1, 2, 1).sum(-1) * 2.0",
}


@pytest.fixture(scope="module")
def held(tmp_path_factory):
    return cached(lambda name: port(tmp_path_factory.mktemp(name), HELD.replace("{op}", HELD_OPS[name])))


@pytest.mark.parametrize("name", sorted(HELD_OPS))
@given(batch=st.integers(1, 2), height=st.integers(2, 7), width=st.integers(2, 7), seed=st.integers(0, 2**16))
def test_windows_of_a_held_image_match_torch(held, name, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    assert_same_outputs(held(name), [x], tolerance=1e-5, what=f"{name} x{x.shape}")
    assert_same_outputs(held(name), [x], tolerance=1e-5, what=f"{name} x{x.shape} (XLA)", jit=True)


def test_windows_of_a_held_image_move_no_data(held):
    from porter.verify.harness import count_transposes

    x = random_input(0, (2, 3, 6, 5))
    assert count_transposes(held("rows_then_columns").keras_model, [x]) <= 2
