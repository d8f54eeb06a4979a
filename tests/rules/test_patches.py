"""Property tests of the unfold/fold rules (porter/rules/patches.py) against real torch.

kernel size, dilation, padding and stride are drawn by hypothesis (non-square kernels, stride 2-3 with padding and
dilation), and the input size from the smallest torch accepts for them upwards (batch 1, odd sizes, a single
sliding position). They are constructor arguments of the model, so one port serves every draw: each example builds
both models again with them. unfold reads a Conv2d's channels-last output (its rows must come out in torch's
(c, i, j) order), torch's layout (the model input) and goes through nn.Unfold; fold reads the channels-last result
of a `transpose(1, 2)` of Linear tokens, torch's layout, nn.Fold, and unfold's own output (the round trip)."""

import textwrap

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from tests.rules.op_ports import assert_same_outputs, cached, port, random_input

HEADER = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class OpModel(nn.Module):
    def __init__(self, k=(2, 2), d=(1, 1), p=(0, 0), s=(1, 1), out=(4, 4), channels=4):
        super().__init__()
        self.k, self.d, self.p, self.s, self.out = k, d, p, s, out
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.tokens = nn.Linear(5, channels * k[0] * k[1])
        self.unfold = nn.Unfold(k, dilation=d, padding=p, stride=s)
        self.fold = nn.Fold(out, k, dilation=d, padding=p, stride=s)

    def forward(self, x):
'''
# name -> (forward body, input layout): "image" inputs are (N, 3, H, W), "tokens" (N, L, 5), "columns" (N, C*K, L)
OPS = {
    "unfold_channels_last": ("y = F.unfold(self.conv(x), self.k, self.d, self.p, self.s)", "image"),
    "unfold_keywords_transposed": (
        ("y = F.unfold(self.conv(x), kernel_size=self.k, dilation=self.d, padding=self.p, "
         "stride=self.s).transpose(1, 2) * 2.0"), "image"),
    "unfold_source": ("y = F.unfold(x, self.k, self.d, self.p, self.s)", "image"),
    "unfold_module": ("y = self.unfold(self.conv(x))", "image"),
    "fold_round_trip": (
        ("y = self.conv(x)\n        u = F.unfold(y, self.k, self.d, self.p, self.s)\n"
         "        y = F.fold(u, (y.shape[2], y.shape[3]), self.k, self.d, self.p, self.s)"), "image"),
    "fold_tokens_channels_last": (
        "t = self.tokens(x).transpose(1, 2)\n        y = F.fold(t, self.out, self.k, self.d, self.p, self.s)",
        "tokens"),
    "fold_source": (
        ("y = F.fold(x, output_size=self.out, kernel_size=self.k, dilation=self.d, padding=self.p, "
         "stride=self.s)"), "columns"),
    "fold_module_then_conv": ("y = F.relu(self.fold(x))", "columns"),
}
CHANNELS = 4


def op_model(name):
    body, _ = OPS[name]
    return textwrap.dedent(HEADER) + "        " + body + "\n        return y\n"


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    specs = {"image": "3,8,8", "tokens": "9,5", "columns": "16,9"}
    return cached(lambda name: port(tmp_path_factory.mktemp(name), op_model(name),
                                    input_specs=(specs[OPS[name][1]],)))


def positions(size, kernel, dilation, padding, stride):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


@st.composite
def patch_options(draw):
    """(k, d, p, s, (H, W)): per axis a kernel 1-3, dilation 1-2, padding 0-2, stride 1-3 and the smallest size
    that leaves one sliding position, plus 0-5."""
    k, d, p, s, size = [], [], [], [], []
    for _ in range(2):
        k.append(draw(st.integers(1, 3)))
        d.append(draw(st.integers(1, 2)))
        p.append(draw(st.integers(0, 2)))
        s.append(draw(st.integers(1, 3)))
        smallest = max(1, d[-1] * (k[-1] - 1) + 1 - 2 * p[-1])
        size.append(smallest + draw(st.integers(0, 5)))
    return tuple(k), tuple(d), tuple(p), tuple(s), tuple(size)


@pytest.mark.parametrize("name", sorted(OPS))
@given(options=patch_options(), batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_patches_match_torch(ported, name, options, batch, seed):
    k, d, p, s, size = options
    pair = ported(name)
    pair.init_args = {"k": k, "d": d, "p": p, "s": s, "out": size, "channels": CHANNELS}
    pair.build()
    count = positions(size[0], k[0], d[0], p[0], s[0]) * positions(size[1], k[1], d[1], p[1], s[1])
    shape = {"image": (batch, 3, *size), "tokens": (batch, count, 5),
             "columns": (batch, CHANNELS * k[0] * k[1], count)}[OPS[name][1]]
    x = random_input(seed, shape)
    assert_same_outputs(pair, [x], tolerance=1e-5, what=f"{name} k={k} d={d} p={p} s={s} x{x.shape}")


def test_unfold_and_fold_run_on_channels_last_without_transposes(ported):
    """unfold of a conv output and fold of transposed tokens read the tensors as they lie: the only layout
    conversion left is the one at the model's boundary."""
    import inspect

    for name in ("unfold_keywords_transposed", "fold_tokens_channels_last"):
        source = inspect.getsource(ported(name).keras_module.OpModel.call)
        assert "channels_last=True" in source and "tf.transpose" not in source, source
        assert source.count("to_channels_") <= 2, source


def test_unfold_rows_are_in_torch_order():
    """The rows of unfold are (channel, kernel row, kernel column): a channel-major input shows it directly."""
    from porter.runtime.patches import unfold

    x = np.arange(2 * 3 * 3, dtype=np.float32).reshape(1, 2, 3, 3)
    want = torch.nn.functional.unfold(torch.from_numpy(x), (2, 2)).numpy()
    got = np.asarray(unfold(np.transpose(x, (0, 2, 3, 1)), (2, 2), channels_last=True))
    np.testing.assert_array_equal(np.transpose(got, (0, 2, 1)), want)


PATCH_MIXER = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class PatchMixer(nn.Module):
    """Overlapping 3x3 patches (stride 2, padding 1) mixed by an MLP and folded back, between two convolutions."""

    def __init__(self, channels=4, hidden=24):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.mix = nn.Sequential(nn.Linear(channels * 9, hidden), nn.GELU(), nn.Linear(hidden, channels * 9))
        self.head = nn.Conv2d(channels, 2, 1)

    def forward(self, x):
        y = self.stem(x)
        h, w = y.shape[-2:]
        patches = F.unfold(y, kernel_size=3, padding=1, stride=2).transpose(1, 2)
        patches = self.mix(patches)
        y = y + F.fold(patches.transpose(1, 2), (h, w), kernel_size=3, padding=1, stride=2)
        return self.head(torch.relu(y))
'''


@pytest.fixture(scope="module")
def patch_mixer(tmp_path_factory):
    return port(tmp_path_factory.mktemp("patch_mixer"), textwrap.dedent(PATCH_MIXER), input_specs=("3,8,8",))


@given(batch=st.integers(1, 3), height=st.sampled_from([1, 4, 7, 8]), width=st.sampled_from([2, 5, 8]),
       seed=st.integers(0, 2**16))
def test_patch_mixer_end_to_end(patch_mixer, batch, height, width, seed):
    x = random_input(seed, (batch, 3, height, width))
    for jit in (False, True):
        assert_same_outputs(patch_mixer, [x], tolerance=1e-5, what=f"patch_mixer jit={jit} x{x.shape}", jit=jit)



def test_patch_mixer_traces_only_boundary_transposes(patch_mixer):
    """unfold -> Linear tokens -> fold on channels-last tensors: the traced graph converts on entry and exit only."""
    from porter.verify.harness import count_transposes

    assert count_transposes(patch_mixer.keras_model, [random_input(0, (2, 3, 8, 8))]) <= 2


torch.set_num_threads(1)
