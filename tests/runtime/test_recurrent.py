"""Numeric tests of porter.runtime.recurrent against real torch.nn.RNN / LSTM / GRU and their cells."""

import keras
import numpy as np
import pytest
import tensorflow as tf
import torch
from hypothesis import given
from hypothesis import strategies as st

from porter.runtime.recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from porter.verify.compare import assert_equivalent
from porter.verify.torch_bridge import copy_torch_weights, perturb_torch_module

KINDS = {
    "rnn_tanh": (torch.nn.RNN, RNN, {"nonlinearity": "tanh"}),
    "rnn_relu": (torch.nn.RNN, RNN, {"nonlinearity": "relu"}),
    "lstm": (torch.nn.LSTM, LSTM, {}),
    "gru": (torch.nn.GRU, GRU, {}),
}
CELLS = {
    "rnn_tanh": (torch.nn.RNNCell, RNNCell, {"nonlinearity": "tanh"}),
    "rnn_relu": (torch.nn.RNNCell, RNNCell, {"nonlinearity": "relu"}),
    "lstm": (torch.nn.LSTMCell, LSTMCell, {}),
    "gru": (torch.nn.GRUCell, GRUCell, {}),
}


def _pair(kind, seed, **arguments):
    torch_class, runtime_class, extra = KINDS[kind]
    torch.manual_seed(seed)
    reference = perturb_torch_module(torch_class(**arguments, **extra), seed).eval()
    return reference, copy_torch_weights(reference, runtime_class(**arguments, **extra))


def _initial_state(kind, rng, layers, batch, hidden, proj_size=0, batched=True):
    shape = (layers, batch, hidden) if batched else (layers, hidden)
    h_shape = (*shape[:-1], proj_size or hidden)
    h0 = rng.standard_normal(h_shape).astype(np.float32)
    if kind == "lstm":
        return h0, rng.standard_normal(shape).astype(np.float32)
    return h0


def _torch_tensors(value):
    if isinstance(value, tuple):
        return tuple(torch.from_numpy(v) for v in value)
    return None if value is None else torch.from_numpy(value)


def _flatten(result):
    """(output, h_n) or (output, (h_n, c_n)) -> list of arrays."""
    output, state = result
    states = state if isinstance(state, tuple) else (state,)
    return [np.asarray(v.detach().numpy() if hasattr(v, "detach") else v) for v in (output, *states)]


def _check(expected, actual, tolerance=1e-4):
    expected, actual = _flatten(expected), _flatten(actual)
    assert len(expected) == len(actual)
    errors = [assert_equivalent(e, a, tolerance, what=f"result {i}")
              for i, (e, a) in enumerate(zip(expected, actual))]
    return max(errors)


@given(kind=st.sampled_from(sorted(KINDS)), layers=st.integers(1, 2), bidirectional=st.booleans(),
       batch_first=st.booleans(), batch=st.integers(1, 3), steps=st.integers(1, 5), cin=st.integers(1, 6),
       hidden=st.integers(1, 6), bias=st.booleans(), with_state=st.booleans(), use_proj=st.booleans(),
       seed=st.integers(0, 2**16))
def test_recurrent_matches_torch(kind, layers, bidirectional, batch_first, batch, steps, cin, hidden, bias,
                                 with_state, use_proj, seed):
    proj_size = hidden - 1 if kind == "lstm" and use_proj and hidden > 1 else 0
    arguments = {"input_size": cin, "hidden_size": hidden, "num_layers": layers, "bias": bias,
                 "batch_first": batch_first, "bidirectional": bidirectional}
    if proj_size:
        arguments["proj_size"] = proj_size
    reference, ported = _pair(kind, seed, **arguments)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, steps, cin) if batch_first else (steps, batch, cin)).astype(np.float32)
    directions = 2 if bidirectional else 1
    hx = _initial_state(kind, rng, layers * directions, batch, hidden, proj_size) if with_state else None
    with torch.no_grad():
        expected = reference(torch.from_numpy(x), _torch_tensors(hx))
    _check(expected, ported(x, hx))


@given(kind=st.sampled_from(sorted(KINDS)), layers=st.integers(1, 2), bidirectional=st.booleans(),
       batch_first=st.booleans(), batch=st.integers(1, 3), steps=st.integers(1, 5), with_state=st.booleans(),
       seed=st.integers(0, 2**16))
def test_recurrent_swapped_input_matches_torch(kind, layers, bidirectional, batch_first, batch, steps, with_state,
                                               seed):
    """`swapped=True` (the port holds `x.permute(1, 0, 2)` as it lay): torch's result for the permuted input, its
    output swapped alike, h_n as torch's, and no Transpose in the traced graph."""
    arguments = {"input_size": 3, "hidden_size": 4, "num_layers": layers, "batch_first": batch_first,
                 "bidirectional": bidirectional}
    reference, ported = _pair(kind, seed, **arguments)
    rng = np.random.default_rng(seed)
    held = rng.standard_normal((steps, batch, 3) if batch_first else (batch, steps, 3)).astype(np.float32)
    hx = _initial_state(kind, rng, layers * (2 if bidirectional else 1), batch, 4) if with_state else None
    with torch.no_grad():
        output, state = reference(torch.from_numpy(held).permute(1, 0, 2), _torch_tensors(hx))
    actual_output, actual_state = ported(held, hx, swapped=True)
    _check((output.permute(1, 0, 2), state), (actual_output, actual_state))
    function = tf.function(lambda x: ported(x, hx, swapped=True))
    assert "Transpose" not in _graph_op_types(function, tf.TensorSpec(held.shape))


@given(kind=st.sampled_from(sorted(KINDS)), bidirectional=st.booleans(), with_state=st.booleans(),
       steps=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_recurrent_unbatched_matches_torch(kind, bidirectional, with_state, steps, seed):
    reference, ported = _pair(kind, seed, input_size=3, hidden_size=4, num_layers=2, bidirectional=bidirectional,
                              batch_first=True)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((steps, 3)).astype(np.float32)
    hx = _initial_state(kind, rng, 2 * (2 if bidirectional else 1), 1, 4, batched=False) if with_state else None
    with torch.no_grad():
        expected = reference(torch.from_numpy(x), _torch_tensors(hx))
    _check(expected, ported(x, hx))


def _graph_op_types(function, *specs):
    return {op.type for op in function.get_concrete_function(*specs).graph.get_operations()}


@pytest.mark.parametrize("kind, batch_first", [("lstm", True), ("lstm", False), ("gru", True), ("rnn_tanh", False),
                                               ("rnn_relu", True)])
def test_recurrent_jit_compile_and_no_transpose(kind, batch_first):
    reference, ported = _pair(kind, 3, input_size=5, hidden_size=6, num_layers=2, bidirectional=True,
                              batch_first=batch_first)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 7, 5) if batch_first else (7, 3, 5)).astype(np.float32)
    hx = _initial_state(kind, rng, 4, 3, 6)
    function = tf.function(lambda x, hx: ported(x, hx), jit_compile=True)
    with torch.no_grad():
        expected = reference(torch.from_numpy(x), _torch_tensors(hx))
    _check(expected, function(x, hx))
    # batch size unknown at trace time; no Transpose anywhere in the traced graph
    x_spec = tf.TensorSpec((None, 7, 5) if batch_first else (7, None, 5))
    h_spec = tf.TensorSpec((4, None, 6))
    hx_spec = (h_spec, h_spec) if kind == "lstm" else h_spec
    assert "Transpose" not in _graph_op_types(tf.function(lambda x, hx: ported(x, hx)), x_spec, hx_spec)


def test_recurrent_dynamic_time_length():
    reference, ported = _pair("gru", 5, input_size=3, hidden_size=4, num_layers=2, bidirectional=True,
                              batch_first=True)
    function = tf.function(lambda x: ported(x)).get_concrete_function(tf.TensorSpec((None, None, 3)))
    for steps in (1, 6):
        x = np.random.default_rng(steps).standard_normal((2, steps, 3)).astype(np.float32)
        with torch.no_grad():
            expected = reference(torch.from_numpy(x))
        _check(expected, function(tf.constant(x)))


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_tanh"])
def test_recurrent_gradients_match_torch(kind):
    reference, ported = _pair(kind, 11, input_size=4, hidden_size=5, num_layers=2, bidirectional=True,
                              batch_first=True)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 6, 4)).astype(np.float32)
    hx = _initial_state(kind, rng, 4, 2, 5)
    expected_out = reference(torch.from_numpy(x))
    weights = [rng.standard_normal(a.shape).astype(np.float32) for a in _flatten(expected_out)]

    x_t = torch.from_numpy(x).requires_grad_()
    hx_t = tuple(v.requires_grad_() for v in _torch_tensors(hx if isinstance(hx, tuple) else (hx,)))
    result = reference(x_t, hx_t if kind == "lstm" else hx_t[0])
    states = result[1] if isinstance(result[1], tuple) else (result[1],)
    loss = sum((v * torch.from_numpy(w)).sum() for v, w in zip((result[0], *states), weights))
    loss.backward()
    expected = {"x": x_t.grad.numpy(), **{f"hx{i}": v.grad.numpy() for i, v in enumerate(hx_t)},
                **{name: p.grad.numpy() for name, p in reference.named_parameters()}}

    entries = ported.torch_state()

    @tf.function(jit_compile=True)
    def gradients(x, hx):
        with tf.GradientTape() as tape:
            tape.watch([x, hx])
            result = ported(x, hx)
            flat = [result[0], *(result[1] if isinstance(result[1], tuple) else (result[1],))]
            loss = tf.add_n([tf.reduce_sum(v * w) for v, w in zip(flat, weights)])
        return tape.gradient(loss, [x, hx, [entry.variable for entry in entries]])

    hx_tf = tuple(tf.constant(v) for v in hx) if kind == "lstm" else tf.constant(hx)
    grad_x, grad_hx, grad_params = gradients(tf.constant(x), hx_tf)
    actual = {"x": grad_x, **{f"hx{i}": g for i, g in enumerate(grad_hx if kind == "lstm" else (grad_hx,))},
              **{entry.key: g for entry, g in zip(entries, grad_params)}}
    assert sorted(actual) == sorted(expected)
    for name, value in expected.items():
        assert_equivalent(value, np.asarray(actual[name]), 1e-4, what=f"grad {name}")


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_relu"])
def test_recurrent_training_dropout(kind):
    # dropout=1 zeroes every between-layer activation in torch too: deterministic, comparable
    reference, ported = _pair(kind, 2, input_size=3, hidden_size=4, num_layers=3, dropout=1.0, bidirectional=True)
    x = np.random.default_rng(2).standard_normal((5, 2, 3)).astype(np.float32)
    reference.train()
    with torch.no_grad():
        expected = reference(torch.from_numpy(x))
    _check(expected, ported(x, training=True))
    if kind == "lstm":
        _check(expected, tf.function(lambda x: ported(x, training=True), jit_compile=True)(x))
    reference.eval()
    with torch.no_grad():
        _check(reference(torch.from_numpy(x)), ported(x))  # training=None: inference, no dropout
    # dropout=0.5: random in training (also under XLA), identity in inference
    _, runtime_class, extra = KINDS[kind]
    keras.utils.set_random_seed(3)  # initial weights under which a relu RNN's output is not all zeros (was flaky)
    layer = runtime_class(3, 4, num_layers=2, dropout=0.5, **extra)
    train = tf.function(lambda x: layer(x, training=True)[0], jit_compile=kind == "gru")
    first, second, inference = train(x).numpy(), train(x).numpy(), layer(x)[0].numpy()
    assert not np.allclose(first, second) and not np.allclose(first, inference)
    assert np.array_equal(inference, layer(x, training=False)[0].numpy())


@given(kind=st.sampled_from(sorted(CELLS)), batch=st.integers(0, 3), cin=st.integers(1, 6),
       hidden=st.integers(1, 6), bias=st.booleans(), with_state=st.booleans(), seed=st.integers(0, 2**16))
def test_recurrent_cells_match_torch(kind, batch, cin, hidden, bias, with_state, seed):
    torch_class, runtime_class, extra = CELLS[kind]
    torch.manual_seed(seed)
    reference = perturb_torch_module(torch_class(cin, hidden, bias=bias, **extra), seed)
    ported = copy_torch_weights(reference, runtime_class(cin, hidden, bias=bias, **extra))
    rng = np.random.default_rng(seed)
    lead = (batch,) if batch else ()  # batch 0 stands for an unbatched (1-D) input
    x = rng.standard_normal((*lead, cin)).astype(np.float32)
    hx = None
    if with_state:
        hx = rng.standard_normal((*lead, hidden)).astype(np.float32)
        if kind == "lstm":
            hx = (hx, rng.standard_normal((*lead, hidden)).astype(np.float32))
    with torch.no_grad():
        expected = reference(torch.from_numpy(x), _torch_tensors(hx))
    actual = ported(x, hx)
    if kind == "lstm":
        for e, a in zip(expected, actual):
            assert_equivalent(e.numpy(), np.asarray(a))
    else:
        assert_equivalent(expected.numpy(), np.asarray(actual))


def test_recurrent_cell_jit_compile():
    reference = perturb_torch_module(torch.nn.LSTMCell(3, 5), 1)
    ported = copy_torch_weights(reference, LSTMCell(3, 5))
    x, h, c = (np.random.default_rng(i).standard_normal((2, n)).astype(np.float32) for i, n in enumerate((3, 5, 5)))
    with torch.no_grad():
        expected = reference(torch.from_numpy(x), _torch_tensors((h, c)))
    actual = tf.function(lambda x, h, c: ported(x, (h, c)), jit_compile=True)(x, h, c)
    for e, a in zip(expected, actual):
        assert_equivalent(e.numpy(), np.asarray(a))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_recurrent_state_keys_and_config(kind):
    torch_class, runtime_class, extra = KINDS[kind]
    arguments = {"input_size": 3, "hidden_size": 4, "num_layers": 2, "bias": False, "bidirectional": True,
                 "dropout": 0.25}
    reference, ported = torch_class(**arguments, **extra), runtime_class(**arguments, **extra)
    assert [e.key for e in ported.torch_state("rnn.")] == ["rnn." + k for k in reference.state_dict()]
    assert len(ported.trainable_weights) == len(reference.state_dict())
    assert ported.weight_hh_l1_reverse.shape == tuple(reference.weight_hh_l1_reverse.shape)
    clone = runtime_class.from_config(ported.get_config())
    assert [e.key for e in clone.torch_state()] == list(reference.state_dict())
    for name in ("input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional"):
        assert getattr(ported, name) == getattr(reference, name), name


def test_recurrent_constructor_signatures_follow_torch():
    # positional order as torch: RNN takes nonlinearity 4th, LSTM takes proj_size after bidirectional
    layer = RNN(3, 4, 2, "relu", False, True, 0.0, True)
    assert (layer.nonlinearity, layer.bias, layer.batch_first, layer.bidirectional) == ("relu", False, True, True)
    lstm = LSTM(3, 4, 1, True, False, 0.0, False, 2, None, None)
    assert lstm.proj_size == 2 and lstm.weight_hr_l0.shape == (2, 4)
    assert RNNCell(3, 4, True, "relu").nonlinearity == "relu"
    with pytest.raises(ValueError):
        RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError):
        LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError):
        GRU(3, 4, dropout=1.5)


def test_recurrent_mixed_precision():
    reference = perturb_torch_module(torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True), 4).eval()
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_float16")
    try:
        ported = copy_torch_weights(reference, LSTM(3, 4, num_layers=2, bidirectional=True))
        x = np.random.default_rng(4).standard_normal((5, 2, 3)).astype(np.float32)
        output, (h_n, c_n) = tf.function(lambda x: ported(x), jit_compile=True)(x)
    finally:
        keras.config.set_dtype_policy(previous)
    assert output.dtype == h_n.dtype == c_n.dtype == tf.float16
    with torch.no_grad():
        expected = reference(torch.from_numpy(x))
    _check(expected, (output.numpy().astype(np.float32), (h_n.numpy().astype(np.float32),
                                                           c_n.numpy().astype(np.float32))), tolerance=5e-3)
