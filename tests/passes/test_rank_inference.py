"""Rank inference (porter/passes/rank_inference.py): the ranks of forward arguments converted without example inputs,
read off their uses (a Conv1d, a Sequential whose first layer is one, an in-file class or function, through
rank-preserving ops), so that `x.transpose(1, 2)` before a Conv1d folds into it as it does with --input-shape.
Unit cases: snippets in, inferred ranks out (conflicting or missing evidence: no rank). Numeric cases: the repro of
the torchaudio Conformer's convolution module and a conformer-like encoder, converted without --input-shape,
compared with torch for hypothesis-drawn sizes (batch 1 included), eagerly and under XLA, with their Transposes
counted."""

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.harness import PortedPair, count_transposes
from tests.rules.op_ports import assert_same_outputs, cached, random_input

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"

CONV_MODULE = HEADER + '''
class ConvModule(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.layer_norm = nn.LayerNorm(d)
        self.seq = nn.Sequential(nn.Conv1d(d, d, 1), nn.BatchNorm1d(d), nn.SiLU())

    def forward(self, x):
        x = self.layer_norm(x)
        x = x.transpose(1, 2)
        x = self.seq(x)
        return x.transpose(1, 2)


class Layer(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.conv_module = ConvModule(d)

    def forward(self, x):
        residual = x
        x = x.transpose(0, 1)
        x = self.conv_module(x)
        x = x.transpose(0, 1)
        return x + residual
'''

# the torchaudio Conformer's shape: (B, T, D) in, (T, B, D) through the layers, each a feed-forward half step, a
# convolution module (pointwise Conv1d, GLU over channels, depthwise Conv1d, BatchNorm1d, SiLU) and a final norm
ENCODER = HEADER + '''
class FeedForward(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.sequential = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, hidden), nn.SiLU(), nn.Dropout(0.0),
                                        nn.Linear(hidden, d))

    def forward(self, input):
        return self.sequential(input)


class Convolution(nn.Module):
    def __init__(self, d, kernel):
        super().__init__()
        self.layer_norm = nn.LayerNorm(d)
        self.sequential = nn.Sequential(
            nn.Conv1d(d, 2 * d, 1), nn.GLU(dim=1), nn.Conv1d(d, d, kernel, padding=(kernel - 1) // 2, groups=d),
            nn.BatchNorm1d(d), nn.SiLU(), nn.Conv1d(d, d, 1), nn.Dropout(0.0))

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        x = self.layer_norm(input)
        x = x.transpose(1, 2)
        x = self.sequential(x)
        return x.transpose(1, 2)


class EncoderLayer(nn.Module):
    def __init__(self, d, hidden, kernel):
        super().__init__()
        self.ffn = FeedForward(d, hidden)
        self.conv_module = Convolution(d, kernel)
        self.final_layer_norm = nn.LayerNorm(d)

    def _apply_convolution(self, input):
        residual = input
        input = input.transpose(0, 1)
        input = self.conv_module(input)
        input = input.transpose(0, 1)
        return residual + input

    def forward(self, input):
        residual = input
        x = self.ffn(input)
        x = x * 0.5 + residual
        x = self._apply_convolution(x)
        return self.final_layer_norm(x)


class Encoder(nn.Module):
    def __init__(self, d=8, hidden=16, kernel=3, layers=2):
        super().__init__()
        self.layers = nn.ModuleList([EncoderLayer(d, hidden, kernel) for _ in range(layers)])

    def forward(self, input):
        x = input.transpose(0, 1)
        for layer in self.layers:
            x = layer(x)
        return x.transpose(0, 1)
'''


def inferred(tmp_path, body, main=None):
    """{(scope, parameter): rank} the pass infers for the source HEADER + body."""
    path = tmp_path / "model.py"
    path.write_text(HEADER + textwrap.dedent(body))
    conversion = convert(ConvertOptions(path, class_name=main))
    return {(scope[1] if scope[0] is None else f"{scope[0]}.{scope[1]}", name): rank
            for (scope, name), rank in conversion.translator.argument_ranks.items()}


def test_repro_ranks_flow_from_the_conv1d_to_the_caller(tmp_path):
    source = CONV_MODULE[len(HEADER):]
    assert inferred(tmp_path, source, "Layer") == {("ConvModule.forward", "x"): 3, ("Layer.forward", "x"): 3}


def test_conformer_like_encoder_every_argument_rank_three(tmp_path):
    ranks = inferred(tmp_path, ENCODER[len(HEADER):], "Encoder")
    assert ranks == {("Convolution.forward", "input"): 3, ("EncoderLayer._apply_convolution", "input"): 3,
                     ("EncoderLayer.forward", "input"): 3, ("FeedForward.forward", "input"): 3,
                     ("Encoder.forward", "input"): 3}


def test_conv2d_helper_function_and_permute(tmp_path):
    ranks = inferred(tmp_path, '''
        def to_channels_first(a):
            return a.permute(0, 3, 1, 2)


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Dropout(0.1), nn.Conv2d(3, 4, 3))
                self.proj = nn.Conv1d(4, 4, 1)

            def forward(self, x, y):
                x = F.relu(-x)
                h = to_channels_first(x)
                return self.body(h), self.proj(y.permute(0, 2, 1))
        ''', "Net")
    assert ranks == {("to_channels_first", "a"): 4, ("Net.forward", "x"): 4, ("Net.forward", "y"): 3}


def test_conflicting_evidence_leaves_ranks_unknown(tmp_path):
    ranks = inferred(tmp_path, '''
        class Norm(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = nn.LayerNorm(4)

            def forward(self, x):
                return self.norm(x)


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = Norm()
                self.c1 = nn.Conv1d(4, 4, 1)
                self.c2 = nn.Conv2d(4, 4, 1)

            def forward(self, x, y):
                return self.c1(self.a(x).transpose(1, 2)), self.c2(self.a(y))
        ''', "Net")
    assert ranks == {}


def test_no_evidence_annotations_dim_checks_rank_changes_and_branches(tmp_path):
    ranks = inferred(tmp_path, '''
        def maybe_flat(a, flat: bool):
            if flat:
                return a.flatten(1)
            return a


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv1d(4, 4, 1)

            def forward(self, x: torch.Tensor, y, z, w):
                if x.dim() == 3:
                    x = x + 1
                y = y.flatten(2)
                if w.ndim == 4:
                    z = z.mean(-1)
                return self.conv(y) + self.conv(z) + self.conv(maybe_flat(w, True)) + x.sum()
        ''', "Net")
    assert ("Net.forward", "x") not in ranks and ("Net.forward", "y") not in ranks
    assert ("Net.forward", "z") not in ranks and ("Net.forward", "w") not in ranks
    assert ("maybe_flat", "a") not in ranks


def _port(folder, source, class_name):
    path = folder / "model.py"
    path.write_text(source)
    conversion = convert(ConvertOptions(path, folder / "out", class_name=class_name))  # no --input-shape
    assert conversion.exit_code == 0, (conversion.exit_code, conversion.manifest)
    write_tree(folder / "out", conversion.files)
    return PortedPair(folder / "out")


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    sources = {"Layer": CONV_MODULE, "Encoder": ENCODER}
    return cached(lambda name: _port(tmp_path_factory.mktemp(name), sources[name], name))


def _matches(pair, x, most_transposes):
    assert_same_outputs(pair, [x], tolerance=1e-4)
    assert_same_outputs(pair, [x], tolerance=1e-4, jit=True)
    assert count_transposes(pair.keras_model, [x]) <= most_transposes


@settings(max_examples=3, deadline=None)
@given(time=st.integers(1, 6), batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_repro_folds_without_input_shape(ported, time, batch, seed):
    pair = ported("Layer")
    assert "x_nhwc = to_channels_last(x)" not in (pair.out_dir / "model_keras.py").read_text()
    # torch moves data 4 times here; before rank inference the port did 5 (the transposes around the Conv1d)
    _matches(pair, random_input(seed, (time, batch, 8)), 3)


@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 3), time=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_conformer_like_encoder_matches_torch_without_input_shape(ported, batch, time, seed):
    pair = ported("Encoder")
    # torch moves data 10 times here: the port at most that and the boundary's two (16 before rank inference)
    _matches(pair, random_input(seed, (batch, time, 8)), 12)


def test_unpacking_the_shape_fixes_the_rank_through_layers_and_blocks(tmp_path):
    ranks = inferred(tmp_path, '''
        class Mixer(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)

            def forward(self, x):
                B, N, C = x.shape
                return self.fc(x).reshape(B, N, C)


        class Block(nn.Module):
            def __init__(self, dim, norm_layer=nn.LayerNorm):
                super().__init__()
                self.norm = norm_layer(dim)
                self.mixer = Mixer(dim)

            def forward(self, x):
                return x + self.mixer(self.norm(x))


        class Net(nn.Module):
            def forward(self, x, y):
                b, *rest = y.shape
                _, c, h, w = x.size()
                return x.flatten(1), y
        ''', "Block")
    assert ranks[("Mixer.forward", "x")] == 3 and ranks[("Block.forward", "x")] == 3
    assert ranks[("Net.forward", "x")] == 4 and ("Net.forward", "y") not in ranks  # (a starred unpack: any rank)
