"""Numeric tests of porter.runtime.packed_sequence and the packed path of porter.runtime.recurrent against real torch:
pack_padded_sequence -> RNN / LSTM / GRU -> pad_packed_sequence (outputs, final states, lengths), eager and under XLA,
and pad_sequence / pack_sequence on their own."""

import keras
import numpy as np
import pytest
import tensorflow as tf
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.utils import rnn as torch_rnn

from porter.runtime.packed_sequence import pack_padded_sequence, pack_sequence, pad_packed_sequence, pad_sequence
from porter.runtime.recurrent import GRU, LSTM, RNN
from porter.verify.compare import assert_equivalent
from porter.verify.torch_bridge import copy_torch_weights, perturb_torch_module

KINDS = {"lstm": (torch.nn.LSTM, LSTM), "gru": (torch.nn.GRU, GRU), "rnn": (torch.nn.RNN, RNN)}


def _pair(kind, seed, **arguments):
    torch_class, runtime_class = KINDS[kind]
    torch.manual_seed(seed)
    reference = perturb_torch_module(torch_class(**arguments), seed).eval()
    return reference, copy_torch_weights(reference, runtime_class(**arguments))


@st.composite
def packed_cases(draw):
    """A layer configuration and a padded batch with its lengths (1 and the full length among them often)."""
    batch = draw(st.integers(1, 4))
    steps = draw(st.integers(1, 6))
    lengths = draw(st.lists(st.sampled_from(sorted({1, steps, max(1, steps - 1)})) | st.integers(1, steps),
                            min_size=batch, max_size=batch))
    enforce_sorted = draw(st.booleans())
    if enforce_sorted:
        lengths = sorted(lengths, reverse=True)
    return {"kind": draw(st.sampled_from(sorted(KINDS))), "layers": draw(st.integers(1, 2)),
            "bidirectional": draw(st.booleans()), "batch_first": draw(st.booleans()), "batch": batch,
            "layer_batch_first": draw(st.booleans()),  # a packed sequence runs the same whatever the layer's says
            "steps": steps, "lengths": np.array(lengths, np.int64), "enforce_sorted": enforce_sorted,
            "hidden": draw(st.integers(1, 5)), "padding_value": draw(st.sampled_from([0.0, -1.5])),
            "total": draw(st.booleans()), "with_state": draw(st.booleans()), "seed": draw(st.integers(0, 2**16))}


def _run_both(case, jit=False):
    """(torch's results, the port's results) as lists of arrays: padded output, lengths, final states."""
    arguments = {"input_size": 3, "hidden_size": case["hidden"], "num_layers": case["layers"],
                 "bidirectional": case["bidirectional"], "batch_first": case["layer_batch_first"]}
    reference, ported = _pair(case["kind"], case["seed"], **arguments)
    rng = np.random.default_rng(case["seed"])
    batch, steps, batch_first = case["batch"], case["steps"], case["batch_first"]
    x = rng.standard_normal((batch, steps, 3) if batch_first else (steps, batch, 3)).astype(np.float32)
    state_shape = (case["layers"] * (2 if case["bidirectional"] else 1), batch, case["hidden"])
    hx = None
    if case["with_state"]:
        hx = tuple(rng.standard_normal(state_shape).astype(np.float32) for _ in range(2 if case["kind"] == "lstm"
                                                                                      else 1))
    total = steps + 1 if case["total"] else None
    pad_args = {"batch_first": batch_first, "padding_value": case["padding_value"], "total_length": total}
    with torch.no_grad():
        packed = torch_rnn.pack_padded_sequence(torch.from_numpy(x), torch.from_numpy(case["lengths"]),
                                                batch_first=batch_first, enforce_sorted=case["enforce_sorted"])
        torch_hx = None if hx is None else tuple(torch.from_numpy(h) for h in hx)
        output, state = reference(packed, torch_hx if torch_hx is None or len(torch_hx) == 2 else torch_hx[0])
        padded, lengths = torch_rnn.pad_packed_sequence(output, **pad_args)
    states = state if isinstance(state, tuple) else (state,)
    expected = [padded.numpy(), lengths.numpy(), *(s.numpy() for s in states)]

    def port(x, lengths, hx):
        packed = pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=case["enforce_sorted"])
        output, state = ported(packed, hx if hx is None or len(hx) == 2 else hx[0])
        padded, lengths = pad_packed_sequence(output, **pad_args)
        return [padded, lengths, *(state if isinstance(state, tuple) else (state,))]

    if jit:
        port = tf.function(port, jit_compile=True)
        actual = port(tf.constant(x), tf.constant(case["lengths"]), hx)
    else:
        actual = port(x, case["lengths"], hx)
    return expected, [np.asarray(a) for a in actual]


def _torch_width(expected, case, width):
    """torch's padded output padded on to `width` steps with padding_value (what traced code gives)."""
    padded = expected[0]
    axis = 1 if case["batch_first"] else 0
    extra = width - padded.shape[axis]
    pads = [(0, 0)] * padded.ndim
    pads[axis] = (0, extra)
    return [np.pad(padded, pads, constant_values=case["padding_value"]), *expected[1:]]


def _check(expected, actual, what):
    assert len(expected) == len(actual), what
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        assert want.shape == got.shape, f"{what} result {index}: {got.shape} for torch's {want.shape}"
        assert_equivalent(want, got, tolerance=1e-5, what=f"{what} result {index}")


@given(case=packed_cases())
def test_packed_rnn_matches_torch(case):
    expected, actual = _run_both(case)
    _check(expected, actual, str({k: v for k, v in case.items() if k != "seed"}))


@settings(max_examples=4)
@given(case=packed_cases())
def test_packed_rnn_matches_torch_under_xla(case):
    """Traced lengths: the padded width is `total_length`, else the input's time size (torch: the longest length)."""
    expected, actual = _run_both(case, jit=True)
    width = case["steps"] + 1 if case["total"] else case["steps"]
    _check(_torch_width(expected, case, width), actual, "xla " + str(case))


def test_packed_bidirectional_lstm_gradients_match_torch():
    """The masked recurrence back-propagates as torch's packed one: nothing flows from the padding."""
    reference, ported = _pair("lstm", 7, input_size=3, hidden_size=4, num_layers=2, bidirectional=True,
                              batch_first=True)
    x = np.random.default_rng(7).standard_normal((3, 5, 3)).astype(np.float32)
    lengths = np.array([2, 5, 1])
    x_torch = torch.from_numpy(x).requires_grad_(True)
    packed = torch_rnn.pack_padded_sequence(x_torch, torch.from_numpy(lengths), batch_first=True,
                                            enforce_sorted=False)
    output, (h, _) = reference(packed)
    padded, _ = torch_rnn.pad_packed_sequence(output, batch_first=True, total_length=5)
    ((padded ** 2).sum() + h.sum()).backward()
    x_tf = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x_tf)
        output, (h, _) = ported(pack_padded_sequence(x_tf, lengths, batch_first=True, enforce_sorted=False))
        padded, _ = pad_packed_sequence(output, batch_first=True, total_length=5)
        loss = tf.reduce_sum(padded ** 2) + tf.reduce_sum(h)
    gradient = tape.gradient(loss, x_tf)
    assert_equivalent(x_torch.grad.numpy(), gradient.numpy(), tolerance=1e-5, what="input gradient")
    assert not np.any(gradient.numpy()[0, 2:]) and not np.any(gradient.numpy()[2, 1:])


def test_packed_batch_unknown_at_trace_time_and_no_transpose():
    reference, ported = _pair("gru", 3, input_size=3, hidden_size=4, num_layers=1, bidirectional=True)

    def port(x, lengths):
        output, h = ported(pack_padded_sequence(x, lengths, enforce_sorted=False))
        return pad_packed_sequence(output, batch_first=True)[0], h

    function = tf.function(port).get_concrete_function(tf.TensorSpec((6, None, 3)), tf.TensorSpec((None,), tf.int64))
    assert not [op for op in function.graph.get_operations() if op.type == "Transpose"]
    x = np.random.default_rng(3).standard_normal((6, 2, 3)).astype(np.float32)
    lengths = np.array([4, 6])
    with torch.no_grad():
        output, h = reference(torch_rnn.pack_padded_sequence(torch.from_numpy(x), torch.from_numpy(lengths),
                                                             enforce_sorted=False))
        padded, _ = torch_rnn.pad_packed_sequence(output, batch_first=True)
    got_padded, got_h = function(tf.constant(x), tf.constant(lengths))
    assert_equivalent(padded.numpy(), got_padded.numpy(), tolerance=1e-5, what="output")
    assert_equivalent(h.numpy(), got_h.numpy(), tolerance=1e-5, what="h_n")


def test_pack_padded_sequence_checks_concrete_lengths_as_torch():
    x = np.zeros((3, 4, 2), np.float32)
    with pytest.raises(ValueError, match="sorted in decreasing order"):
        pack_padded_sequence(x, [2, 4, 1], batch_first=True)
    with pytest.raises(ValueError, match="greater than 0"):
        pack_padded_sequence(x, [4, 0, 0], batch_first=True)
    with pytest.raises(ValueError, match="total_length"):
        pad_packed_sequence(pack_padded_sequence(x, [4, 2, 1], batch_first=True), batch_first=True, total_length=3)
    packed = pack_padded_sequence(x, [2, 4, 1], batch_first=True, enforce_sorted=False)
    np.testing.assert_array_equal(packed.sorted_indices.numpy(), [1, 0, 2])
    np.testing.assert_array_equal(packed.unsorted_indices.numpy(), [1, 0, 2])


@given(sizes=st.lists(st.integers(1, 5), min_size=1, max_size=4), trailing=st.sampled_from([(), (2,), (2, 3)]),
       batch_first=st.booleans(), padding_value=st.sampled_from([0.0, 2.5]),
       padding_side=st.sampled_from(["right", "left"]), seed=st.integers(0, 2**16))
def test_pad_sequence_matches_torch(sizes, trailing, batch_first, padding_value, padding_side, seed):
    rng = np.random.default_rng(seed)
    sequences = [rng.standard_normal((size, *trailing)).astype(np.float32) for size in sizes]
    expected = torch_rnn.pad_sequence([torch.from_numpy(s) for s in sequences], batch_first=batch_first,
                                      padding_value=padding_value, padding_side=padding_side).numpy()
    actual = pad_sequence(sequences, batch_first=batch_first, padding_value=padding_value,
                          padding_side=padding_side).numpy()
    np.testing.assert_array_equal(expected, actual)


@given(sizes=st.lists(st.integers(1, 5), min_size=1, max_size=4), enforce_sorted=st.booleans(),
       seed=st.integers(0, 2**16))
def test_pack_sequence_into_gru_matches_torch(sizes, enforce_sorted, seed):
    if enforce_sorted:
        sizes = sorted(sizes, reverse=True)
    reference, ported = _pair("gru", seed, input_size=2, hidden_size=3, bidirectional=True)
    rng = np.random.default_rng(seed)
    sequences = [rng.standard_normal((size, 2)).astype(np.float32) for size in sizes]
    with torch.no_grad():
        output, h = reference(torch_rnn.pack_sequence([torch.from_numpy(s) for s in sequences],
                                                      enforce_sorted=enforce_sorted))
        padded, lengths = torch_rnn.pad_packed_sequence(output)
    output, got_h = ported(pack_sequence(sequences, enforce_sorted=enforce_sorted))
    got_padded, got_lengths = pad_packed_sequence(output)
    assert_equivalent(padded.numpy(), got_padded.numpy(), tolerance=1e-5, what="output")
    assert_equivalent(h.numpy(), got_h.numpy(), tolerance=1e-5, what="h_n")
    np.testing.assert_array_equal(lengths.numpy(), got_lengths.numpy())


def test_packed_lstm_under_mixed_bfloat16_computes_in_bfloat16():
    """Keras' autocast does not reach inside a packed sequence: the layer casts the padded tensor itself."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        reference, ported = _pair("lstm", 5, input_size=3, hidden_size=4, bidirectional=True, batch_first=True)
    finally:
        keras.config.set_dtype_policy(previous)
    x = np.random.default_rng(5).standard_normal((2, 4, 3)).astype(np.float32)
    lengths = np.array([4, 2])
    output, (h, _) = ported(pack_padded_sequence(x, lengths, batch_first=True))
    padded, _ = pad_packed_sequence(output, batch_first=True)
    assert padded.dtype == tf.bfloat16 and h.dtype == tf.bfloat16
    with torch.no_grad():
        expected, _ = torch_rnn.pad_packed_sequence(reference(torch_rnn.pack_padded_sequence(
            torch.from_numpy(x), torch.from_numpy(lengths), batch_first=True))[0], batch_first=True)
    assert_equivalent(expected.numpy(), tf.cast(padded, tf.float32).numpy(), tolerance=3e-2, what="bfloat16 output")
