"""Property and model tests of the packed-sequence rules (porter/rules/packed_sequence.py) against real torch:
`pack_padded_sequence` -> nn.LSTM / nn.GRU -> `pad_packed_sequence` in models porter converts, eager and under XLA.

The drawn model takes its configuration from its constructor (LSTM or GRU, layers, directions, batch_first,
enforce_sorted, padding_value, total_length), so one conversion serves every example; lengths are drawn with 1 and
the full length among them, unsorted where enforce_sorted=False. Whole models: a tagger (Embedding -> pack ->
bi-LSTM -> pad_packed -> Linear), a time-major seq2seq encoder reading the final states, a wrapper module handed the
packed sequence, and torchaudio's Tacotron2 encoder as published (tests/rules/tacotron2_encoder.py).
"""

import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porter.convert import ConvertOptions, convert
from porter.output import write_tree
from porter.verify.compare import assert_equivalent
from porter.verify.harness import PortedPair, count_transposes
from tests.rules.op_ports import cached

PACKED_RNN = '''
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_packed_sequence


class PackedRNN(nn.Module):
    def __init__(self, mode="lstm", hidden=4, layers=1, bidirectional=False, batch_first=True, enforce_sorted=False,
                 padding_value=0.0, total=False):
        super().__init__()
        if mode == "lstm":
            self.rnn = nn.LSTM(3, hidden, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)
        else:
            self.rnn = nn.GRU(3, hidden, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)
        self.batch_first = batch_first
        self.enforce_sorted = enforce_sorted
        self.padding_value = padding_value
        self.total = total

    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=self.batch_first,
                                                   enforce_sorted=self.enforce_sorted)
        output, state = self.rnn(packed)
        total_length = x.size(1 if self.batch_first else 0) + 1 if self.total else None
        padded, out_lengths = pad_packed_sequence(output, batch_first=self.batch_first,
                                                  padding_value=self.padding_value, total_length=total_length)
        return padded, out_lengths, state
'''

TAGGER = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class Tagger(nn.Module):
    def __init__(self, vocab=50, emb=8, hidden=6, tags=5):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=0)
        self.lstm = nn.LSTM(emb, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.hidden2tag = nn.Linear(2 * hidden, tags)

    def forward(self, tokens, lengths):
        x = self.embedding(tokens)
        packed = pack_padded_sequence(x, lengths.cpu().numpy(), batch_first=True, enforce_sorted=False)
        y, _ = self.lstm(packed)
        y, _ = pad_packed_sequence(y, batch_first=True)
        return F.log_softmax(self.hidden2tag(y), dim=-1)
'''

SEQ2SEQ_ENCODER = '''
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, input_dim=30, emb_dim=8, enc_hid_dim=6, dec_hid_dim=5, dropout=0.1):
        super().__init__()
        self.embedding = nn.Embedding(input_dim, emb_dim)
        self.rnn = nn.GRU(emb_dim, enc_hid_dim, bidirectional=True)
        self.fc = nn.Linear(enc_hid_dim * 2, dec_hid_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, src, src_len):
        embedded = self.dropout(self.embedding(src))
        packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, src_len.to("cpu"))
        packed_outputs, hidden = self.rnn(packed_embedded)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(packed_outputs, total_length=src.size(0))
        hidden = torch.tanh(self.fc(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)))
        return outputs, hidden
'''

WRAPPED = '''
import torch
import torch.nn as nn
from torch.nn.utils import rnn


class BiRNN(nn.Module):
    def __init__(self, size, hidden):
        super().__init__()
        self.rnn = nn.RNN(size, hidden, batch_first=True, bidirectional=True)

    def forward(self, packed):
        out, _ = self.rnn(packed)
        return out


class Model(nn.Module):
    def __init__(self, size=4, hidden=5):
        super().__init__()
        self.birnn = BiRNN(size, hidden)
        self.proj = nn.Linear(2 * hidden, 2)

    def forward(self, x, lengths):
        packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths.tolist(), batch_first=True,
                                                         enforce_sorted=False)
        out = self.birnn(packed)
        out, _ = rnn.pad_packed_sequence(out, batch_first=True, padding_value=-1.0, total_length=x.size(1))
        return self.proj(out)
'''

SORTED_BY_HAND = '''
import torch
import torch.nn as nn


class SortedEncoder(nn.Module):
    """Packs the way code written before enforce_sorted=False does: sorted by length, restored afterwards."""

    def __init__(self, size=4, hidden=5):
        super().__init__()
        self.rnn = nn.GRU(size, hidden, batch_first=True, bidirectional=True)

    def forward(self, x, lengths):
        sorted_lengths, order = lengths.sort(0, descending=True)
        _, restore = torch.sort(order)
        packed = nn.utils.rnn.pack_padded_sequence(x.index_select(0, order), sorted_lengths, batch_first=True)
        out, h = self.rnn(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
        return out.index_select(0, restore), h.index_select(1, restore)
'''

SOURCES = {"packed_rnn": PACKED_RNN, "tagger": TAGGER, "seq2seq_encoder": SEQ2SEQ_ENCODER, "wrapped": WRAPPED,
           "sorted_by_hand": SORTED_BY_HAND}
TACOTRON2_ENCODER = Path(__file__).with_name("tacotron2_encoder.py")
TACOTRON2_ARGS = {"encoder_embedding_dim": 16, "encoder_n_convolution": 2, "encoder_kernel_size": 5}


def _convert(folder, source_path, class_name=None, init_args=None):
    """Convert (no example inputs: a lengths input of shape (batch,) has no --input-shape spelling) and check the
    port has no stub."""
    options = ConvertOptions(source_path, folder / "out", class_name=class_name, init_args=dict(init_args or {}))
    conversion = convert(options)
    assert conversion.exit_code == 0, (conversion.exit_code, conversion.manifest)
    write_tree(folder / "out", conversion.files)
    return folder / "out"


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    def make(name):
        folder = tmp_path_factory.mktemp(name)
        if name == "tacotron2_encoder":
            shutil.copy(TACOTRON2_ENCODER, folder / TACOTRON2_ENCODER.name)
            out = _convert(folder, folder / TACOTRON2_ENCODER.name, "_Encoder", TACOTRON2_ARGS)
        else:
            (folder / f"{name}.py").write_text(textwrap.dedent(SOURCES[name]))
            out = _convert(folder, folder / f"{name}.py")
        return out

    return cached(make)


@st.composite
def configurations(draw):
    batch, steps = draw(st.integers(1, 4)), draw(st.integers(1, 6))
    lengths = draw(st.lists(st.sampled_from(sorted({1, steps})) | st.integers(1, steps), min_size=batch,
                            max_size=batch))
    enforce_sorted = draw(st.booleans())
    if enforce_sorted:
        lengths = sorted(lengths, reverse=True)
    init = {"mode": draw(st.sampled_from(["lstm", "gru"])), "hidden": draw(st.integers(1, 5)),
            "layers": draw(st.integers(1, 2)), "bidirectional": draw(st.booleans()),
            "batch_first": draw(st.booleans()), "enforce_sorted": enforce_sorted,
            "padding_value": draw(st.sampled_from([0.0, -2.0])), "total": draw(st.booleans())}
    return init, batch, steps, np.array(lengths, np.int64), draw(st.integers(0, 2**16))


def _packed_pair(out, init, batch, steps, seed):
    pair = PortedPair(out, init_args=init, seed=seed)
    shape = (batch, steps, 3) if init["batch_first"] else (steps, batch, 3)
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return pair, x


def _assert_all(expected, actual, what):
    assert len(expected) == len(actual), what
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        assert want.shape == got.shape, f"{what} result {index}: {got.shape} for torch's {want.shape}"
        assert_equivalent(want, got, tolerance=1e-5, what=f"{what} result {index}")


@settings(max_examples=6)  # each example builds both models (1.5 s); tests/runtime/test_packed_sequence.py draws more
@given(configuration=configurations())
def test_packed_rnn_port_matches_torch(ported, configuration):
    init, batch, steps, lengths, seed = configuration
    pair, x = _packed_pair(ported("packed_rnn"), init, batch, steps, seed)
    _assert_all(pair.run_torch([x, lengths]), pair.run_keras([x, lengths]), f"{init} lengths={lengths}")


@settings(max_examples=3)
@given(configuration=configurations())
def test_packed_rnn_port_matches_torch_under_xla(ported, configuration):
    """Traced, the padded width is total_length or the input's time size: torch's where the longest length is the
    time size (drawn so here)."""
    init, batch, steps, lengths, seed = configuration
    lengths[np.argmax(lengths)] = steps
    pair, x = _packed_pair(ported("packed_rnn"), init, batch, steps, seed)
    _assert_all(pair.run_torch([x, lengths]), pair.run_keras([x, lengths], jit=True), f"xla {init} {lengths}")


def test_every_spelling_is_translated(ported):
    """`nn.utils.rnn.x`, `torch.nn.utils.rnn.x`, `from torch.nn.utils.rnn import x` and `from torch.nn.utils import
    rnn` + `rnn.x` all reach the rules (no stub: `_convert` checks the exit code)."""
    for name in ("packed_rnn", "wrapped", "tagger"):
        text = next(ported(name).glob("*_keras.py")).read_text()
        assert "pack_padded_sequence(" in text and "pad_packed_sequence(" in text and "not_supported" not in text


def _tokens(seed, batch, steps, high):
    return np.random.default_rng(seed).integers(1, high, (batch, steps)).astype(np.int64)


@pytest.mark.parametrize("lengths", [[3, 7, 1, 5], [7], [2, 2, 1]])
def test_tagger_matches_torch_eager_and_xla(ported, lengths):
    pair = PortedPair(ported("tagger"))
    lengths = np.array(lengths, np.int64)
    tokens = _tokens(len(lengths), len(lengths), 7, 50)
    expected = pair.run_torch([tokens, lengths])  # torch trims to the longest length: so does eager code
    _assert_all(expected, pair.run_keras([tokens, lengths]), "eager")
    if lengths.max() == tokens.shape[1]:  # traced code keeps the time size: torch's when the longest fills it
        _assert_all(expected, pair.run_keras([tokens, lengths], jit=True), "xla")
    assert count_transposes(pair.keras_model, [tokens, lengths]) == 0


def test_seq2seq_encoder_time_major_final_states_match_torch(ported):
    pair = PortedPair(ported("seq2seq_encoder"))
    source, lengths = _tokens(1, 4, 7, 30).T.copy(), np.array([7, 5, 2, 1], np.int64)
    expected = pair.run_torch([source, lengths])
    _assert_all(expected, pair.run_keras([source, lengths]), "eager")
    _assert_all(expected, pair.run_keras([source, lengths], jit=True), "xla")


@pytest.mark.parametrize("name", ["wrapped", "sorted_by_hand"])
def test_wrapper_module_and_sorting_by_hand_match_torch(ported, name):
    """A module handed the packed sequence; lengths sorted, the batch reordered and restored by the model itself."""
    pair = PortedPair(ported(name))
    x = np.random.default_rng(2).standard_normal((3, 6, 4)).astype(np.float32)
    lengths = np.array([2, 6, 4], np.int64)
    expected = pair.run_torch([x, lengths])
    _assert_all(expected, pair.run_keras([x, lengths]), "eager")
    _assert_all(expected, pair.run_keras([x, lengths], jit=True), "xla")


@pytest.mark.parametrize("lengths", [[9, 7, 3, 1], [9, 9, 9, 9], [6, 5, 2, 1], [1]])
def test_tacotron2_encoder_matches_torch(ported, lengths):
    pair = PortedPair(ported("tacotron2_encoder"), init_args=TACOTRON2_ARGS)
    lengths = np.array(lengths, np.int64)
    x = np.random.default_rng(len(lengths)).standard_normal((len(lengths), 16, 9)).astype(np.float32)
    expected = pair.run_torch([x, lengths])
    _assert_all(expected, pair.run_keras([x, lengths]), "eager")
    if lengths.max() == x.shape[2]:
        _assert_all(expected, pair.run_keras([x, lengths], jit=True), "xla")
    assert count_transposes(pair.keras_model, [x, lengths]) <= 1  # the channels-first input, at the boundary


def test_tacotron2_encoder_refuses_unsorted_lengths_as_torch(ported):
    """enforce_sorted=True (the default) with concrete unsorted lengths raises, as torch does."""
    pair = PortedPair(ported("tacotron2_encoder"), init_args=TACOTRON2_ARGS)
    x = np.zeros((2, 16, 9), np.float32)
    with pytest.raises(ValueError, match="sorted in decreasing order"):
        pair.run_keras([x, np.array([3, 9])])


def test_report_says_what_differs(ported):
    """PORTING.md notes the packing and, without total_length, the traced width."""
    text = (ported("tacotron2_encoder") / "PORTING.md").read_text()
    assert "nothing is packed or sorted" in text
    assert "`pad_packed_sequence` without total_length: torch trims to the longest length" in text
    assert "`pack_padded_sequence` makes each batch's shape" not in text  # no TPU lint finding: the width is static
