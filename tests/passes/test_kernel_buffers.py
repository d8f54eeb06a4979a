"""porter.passes.kernel_buffers: a buffer a class reads only as a functional convolution's weight (BlurPool's
filter) is held as a Conv layer holds its kernel, so each convolution takes it as it lies (no Transpose per call);
the torch state_dict's array loads into it, and the port matches torch on drawn sizes, strides, filter sizes and
channel counts (grouped, per channel), eagerly and under XLA. A buffer read any other way keeps torch's order."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.frontend.source import parse_source
from porter.passes.kernel_buffers import kernel_buffers
from porter.verify.harness import PortedPair, count_transposes
from tests.rules.op_ports import assert_same_outputs, port, random_input

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Blur(nn.Module):
    def __init__(self, channels, taps=3, stride=2):
        super().__init__()
        self.channels, self.stride, self.taps = channels, stride, taps
        a = torch.tensor([1.0, 3.0, 3.0, 1.0][:taps]) if taps == 4 else torch.tensor([1.0, 2.0, 1.0][:taps])
        filt = a[:, None] * a[None, :]
        self.register_buffer("filt", (filt / filt.sum())[None, None].repeat(channels, 1, 1, 1))
        self.pad = nn.ReflectionPad2d(((taps - 1) // 2, taps // 2, (taps - 1) // 2, taps // 2))

    def forward(self, x):
        return F.conv2d(self.pad(x), self.filt, stride=self.stride, groups=self.channels)


class Wave1d(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.register_buffer("taps", torch.linspace(-1.0, 1.0, 3 * channels).reshape(channels, 1, 3))
        self.register_buffer("scale", torch.ones(1, channels, 1) * 0.5)

    def forward(self, x):
        return F.conv1d(x, weight=self.taps, padding=1, groups=x.shape[1]) * self.scale


class Shown(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.register_buffer("filt", torch.ones(channels, 1, 3, 3) / 9)

    def forward(self, x):
        return F.conv2d(x, self.filt, padding=1, groups=x.shape[1]) + self.filt.sum()


class BlurNet(nn.Module):
    def __init__(self, width=4, taps=3, stride=2):
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3, padding=1)
        self.blur = Blur(width, taps, stride)
        self.wave = Wave1d(width)
        self.shown = Shown(width)

    def forward(self, x):
        y = self.shown(self.blur(torch.relu(self.conv(x))))
        n, c, h, w = y.shape
        return self.wave(y.reshape(n, c, h * w)).mean(2)
'''


def test_buffers_read_only_as_convolution_weights(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(textwrap.dedent(SOURCE))
    source = parse_source(path)
    verdicts = {name: kernel_buffers(source, source.classes[name]) for name in ("Blur", "Wave1d", "Shown", "BlurNet")}
    # Wave1d's `scale` is arithmetic, Shown's filter is also summed: both stay in torch's order
    assert verdicts == {"Blur": {"filt": 4}, "Wave1d": {"taps": 3}, "Shown": {}, "BlurNet": {}}


@pytest.fixture(scope="module")
def blur_port(tmp_path_factory):
    folder = tmp_path_factory.mktemp("blur")
    port(folder, textwrap.dedent(SOURCE), input_specs=("3,9,9",))
    return folder / "out"


@settings(max_examples=12, deadline=None)
@given(width=st.integers(1, 4), taps=st.integers(2, 4), stride=st.integers(1, 2), height=st.integers(4, 11),
       width_px=st.integers(4, 11), batch=st.integers(1, 2), seed=st.integers(0, 2**16))
def test_kernel_buffers_match_torch_without_transposes(blur_port, width, taps, stride, height, width_px, batch,
                                                       seed):
    pair = PortedPair(blur_port, init_args={"width": width, "taps": taps, "stride": stride}, seed=seed)
    inputs = [random_input(seed, (batch, 3, height, width_px))]
    assert_same_outputs(pair, inputs, tolerance=1e-5)
    assert_same_outputs(pair, inputs, tolerance=1e-5, jit=True)
    # the input's, and Shown's filter (summed as well as convolved: transposed for its convolution)
    assert count_transposes(pair.keras_model, inputs) <= 2
