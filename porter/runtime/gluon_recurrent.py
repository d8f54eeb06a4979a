"""MXNet Gluon's recurrent layers and cells (`mxnet.gluon.rnn.*`) as Keras layers with mxnet 1.9.1's semantics and
`save_parameters` names.

Gluon's gates are stacked as torch stacks them (LSTM: i, f, c, o; GRU: r, z, n with
n = tanh(W_in x + b_in + r * (W_hn h + b_hn)) and h' = (1 - z) * n + z * h), and its i2h/h2h weights have torch's
(gates * hidden, inputs) shapes, so the fused layers are the torch runtime layers (porter/runtime/recurrent.py)
under Gluon's constructor, call and names, and the cells use the same step functions. Weights load unchanged.

- `rnn.LSTM/GRU/RNN(hidden_size, num_layers, layout='TNC', dropout, bidirectional, input_size=0, ...)`:
  `layer(x)` -> output; `layer(x, states)` -> (output, [h_n(, c_n)]) as mxnet; states (L*D, N, H) ordered
  layer by layer, forward before backward. `RNN` defaults to `activation='relu'` as mxnet does; LSTM's
  `projection_size` projects h (`h2r_weight`, torch's proj_size). `input_size=0`
  defers the weights to the first call or to `load_state_dict`. Parameters are keyed as mxnet 1.9.1's
  `save_parameters` writes them: `_unfused.<layer>.i2h_weight` (one direction) or
  `_unfused.<layer>.l_cell.i2h_weight` / `r_cell` (bidirectional); porter's `.params` reader renames the older
  `l0_i2h_weight` form to these.
- `rnn.LSTMCell/GRUCell/RNNCell` (`i2h_weight`, `h2h_weight`, `i2h_bias`, `h2h_bias`): `cell(x, states)` ->
  (output, new states); `begin_state(batch_size, func=...)`; `unroll(length, inputs, begin_state, layout='NTC',
  merge_outputs)` runs the whole sequence in one `tf.while_loop` (the input projection of every step is one MatMul).
- `SequentialRNNCell`/`HybridSequentialRNNCell` (children "0", "1", ...), `BidirectionalCell(l_cell, r_cell)`,
  `DropoutCell(rate)`, `ResidualCell(base_cell)` and `ZoneoutCell(base_cell, ...)` (inference only) stack, reverse
  and wrap cells as mxnet does; `unroll` reads training mode from the Keras call in progress.
`unroll(valid_length=...)` masks outputs past each sequence's length to zero and returns the states of its last
valid step, as mxnet does (a bidirectional cell reverses only the valid steps). Initialisers are accepted and
ignored (the weights come from `load_state_dict`); LSTM state clipping and the fused layers' use_sequence_length are
refused.
"""

import contextlib

import keras
import numpy as np
import tensorflow as tf

from porter.runtime.base import StateEntry, TorchLayer, call_in_training, uniform_fan_in
from porter.runtime.gluon_layers import GluonPendingVariable, _gluon_keras_kwargs
from porter.runtime.gluon_ops import gluon_activation
from porter.runtime.recurrent import (
    GRU,
    LSTM,
    RNN,
    _recurrent_add_bias,
    _recurrent_batch_major,
    _recurrent_cast,
    _recurrent_gru_step,
    _recurrent_lstm_step,
    _recurrent_project,
    _recurrent_scan,
)

_GLUON_RNN_GATES = (("i2h", "weight", "weight_ih"), ("h2h", "weight", "weight_hh"), ("i2h", "bias", "bias_ih"),
                    ("h2h", "bias", "bias_hh"), ("h2r", "weight", "weight_hr"))


def _gluon_rnn_layout(layout):
    if layout not in ("TNC", "NTC"):
        raise ValueError(f"Invalid layout {layout}; must be one of ['TNC' or 'NTC']")
    return layout


def _gluon_state_value(func, shape, dtype):
    """One initial state from `begin_state(func=...)`: mxnet's `zeros`/`ones` (named, as the port passes them) or a
    callable taking `shape` and `dtype`."""
    name = func.rsplit(".", 1)[-1] if isinstance(func, str) else None
    if func is None or name == "zeros":
        return tf.zeros(shape, dtype)
    if name == "ones":
        return tf.ones(shape, dtype)
    if callable(func):
        return tf.convert_to_tensor(func(shape=shape, dtype=dtype))
    raise NotImplementedError(f"begin_state(func={func!r}): porter supports zeros and ones")


def _gluon_state_dtype(kwargs):
    dtype = kwargs.get("dtype") or "float32"
    return np.dtype(dtype).name if not isinstance(dtype, (str, tf.DType)) else dtype


def _gluon_fused_state_entries(layer, prefix):
    """The (key, attribute) pairs of a fused layer's parameters, keyed as mxnet 1.9.1's save_parameters does."""
    pairs = []
    directions = ("l", "r") if layer.bidirectional else ("l",)
    for index in range(layer.num_layers):
        for direction, side in enumerate(directions):
            cell = f"_unfused.{index}.{side}_cell." if layer.bidirectional else f"_unfused.{index}."
            suffix = f"_l{index}" + ("_reverse" if direction else "")
            for gate, kind, torch_name in _GLUON_RNN_GATES:
                if gate == "h2r" and not layer.projection_size:
                    continue
                pairs.append((f"{prefix}{cell}{gate}_{kind}", torch_name + suffix))
    return pairs


class _GluonFusedRecurrent:
    """Gluon's fused `_RNNLayer` on top of the torch runtime layer (mixed in before it): Gluon's constructor,
    deferred input size, call convention, begin_state and parameter names."""

    porter_layout = "source"

    def _gluon_setup(self, mode, hidden_size, num_layers, layout, dropout, bidirectional, input_size, projection_size,
                     kwargs):
        if kwargs.get("use_sequence_length"):
            raise NotImplementedError(f"gluon.rnn.{type(self).__name__[5:]}(use_sequence_length=True) is not "
                                      f"supported by porter yet")
        TorchLayer.__init__(self, **_gluon_keras_kwargs(kwargs))
        self._gluon_mode = mode
        self.layout = _gluon_rnn_layout(layout)
        self.hidden_size, self.num_layers, self.bidirectional = int(hidden_size), int(num_layers), bool(bidirectional)
        self.dropout, self.input_size = float(dropout), int(input_size or 0)
        self.projection_size = int(projection_size or 0)
        self._recurrent_suffixes = None
        if self.input_size:
            self._gluon_create(self.input_size)

    def _gluon_create(self, input_size):
        self._recurrent_setup(self._gluon_mode, int(input_size), self.hidden_size, self.num_layers, True,
                              self.layout == "NTC", self.dropout, self.bidirectional, self.projection_size)

    def build(self, input_shape):
        if self._recurrent_suffixes is None:
            self._gluon_create(input_shape[-1])
        self.built = True

    def state_info(self, batch_size=0):
        size = self.projection_size or self.hidden_size
        shape = (self.num_layers * (2 if self.bidirectional else 1), batch_size, size)
        info = [{"shape": shape, "__layout__": "LNC"}]
        if self._gluon_mode == "LSTM":
            info.append({"shape": shape[:2] + (self.hidden_size,), "__layout__": "LNC"})
        return info

    def begin_state(self, batch_size=0, func=None, **kwargs):
        """Gluon's initial states: a list of (L*D, N, H) tensors (h, and c for LSTM), zeros unless `func` says."""
        dtype = _gluon_state_dtype(kwargs)
        return [_gluon_state_value(func, info["shape"], dtype) for info in self.state_info(batch_size)]

    def call(self, inputs, states=None, training=None):
        x = tf.convert_to_tensor(inputs)
        if len(x.shape) != 3:
            raise ValueError(f"{type(self).__name__} expects a 3-D input in layout {self.layout}, got "
                             f"{len(x.shape)}-D")
        given = states is not None
        hx = None
        if given:
            states = [states] if tf.is_tensor(states) or isinstance(states, (np.ndarray, tf.Variable)) else \
                list(states)
            hx = tuple(states) if self._gluon_mode == "LSTM" else states[0]
        output, finals = super().call(x, hx, training=training)
        if not given:
            return output
        return output, list(finals) if self._gluon_mode == "LSTM" else [finals]

    def torch_state(self, prefix=""):
        pairs = _gluon_fused_state_entries(self, prefix)
        if self._recurrent_suffixes is not None:
            return [StateEntry(key, getattr(self, name)) for key, name in pairs]

        def sized(value):  # the first entry is layer 0's i2h weight: (gates * hidden, input_size)
            self._gluon_create(value.shape[1])
            return value

        return [StateEntry(key, GluonPendingVariable(self, name), sized if i == 0 else None)
                for i, (key, name) in enumerate(pairs)]

    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable, "hidden_size": self.hidden_size,
                  "num_layers": self.num_layers, "layout": self.layout, "dropout": self.dropout,
                  "bidirectional": self.bidirectional, "input_size": self.input_size}
        return config


class GluonLSTM(_GluonFusedRecurrent, LSTM):
    """gluon.rnn.LSTM: `layer(x)` -> output, `layer(x, [h0, c0])` -> (output, [h_n, c_n])."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False, input_size=0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", projection_size=None, h2r_weight_initializer=None,
                 state_clip_min=None, state_clip_max=None, state_clip_nan=False, dtype="float32", **kwargs):
        if state_clip_min is not None or state_clip_max is not None or state_clip_nan:
            raise NotImplementedError("gluon.rnn.LSTM state clipping (state_clip_min/max/nan) is not supported")
        self._gluon_setup("LSTM", hidden_size, num_layers, layout, dropout, bidirectional, input_size, projection_size,
                          {**kwargs, "dtype": dtype})

    def get_config(self):
        return {**super().get_config(), "projection_size": self.projection_size or None}


class GluonGRU(_GluonFusedRecurrent, GRU):
    """gluon.rnn.GRU: `layer(x)` -> output, `layer(x, [h0])` -> (output, [h_n])."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False, input_size=0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", dtype="float32", **kwargs):
        self._gluon_setup("GRU", hidden_size, num_layers, layout, dropout, bidirectional, input_size, None,
                          {**kwargs, "dtype": dtype})


class GluonRNN(_GluonFusedRecurrent, RNN):
    """gluon.rnn.RNN (Elman; `activation` 'relu', mxnet's default, or 'tanh'): `layer(x)` -> output,
    `layer(x, [h0])` -> (output, [h_n])."""

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0, bidirectional=False,
                 i2h_weight_initializer=None, h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, dtype="float32", **kwargs):
        if activation not in ("relu", "tanh"):
            raise ValueError(f"gluon.rnn.RNN activation must be 'relu' or 'tanh', got {activation!r}")
        self._gluon_setup("RNN_RELU" if activation == "relu" else "RNN_TANH", hidden_size, num_layers, layout,
                          dropout, bidirectional, input_size, None, {**kwargs, "dtype": dtype})
        self.activation = self.nonlinearity = activation

    def get_config(self):
        return {**super().get_config(), "activation": self.activation}


# --- cells ------------------------------------------------------------------------------------------------------


def _gluon_time_major(length, inputs, layout):
    """unroll's `inputs` (a tensor in `layout`, or a list of (N, C) steps) as one time-major (T, N, C) tensor."""
    if isinstance(inputs, (list, tuple)):
        if length is not None and not tf.is_tensor(length) and len(inputs) != length:
            raise ValueError(f"unroll: {len(inputs)} inputs for length {length}")
        return tf.stack([tf.convert_to_tensor(x) for x in inputs], axis=0)
    x = tf.convert_to_tensor(inputs)
    if len(x.shape) != 3:
        raise ValueError(f"unroll expects a 3-D input in layout {layout}, got {len(x.shape)}-D")
    return x if layout.find("T") == 0 else _gluon_swap_time(x)


def _gluon_swap_time(x):
    """(N, T, C) <-> (T, N, C)."""
    return _recurrent_batch_major(x)


def _gluon_unroll_result(outputs, layout, merge_outputs):
    """Time-major outputs as unroll returns them: one tensor in `layout` when merge_outputs is True, else a list of
    per-step (N, C) tensors (mxnet's merge_outputs=None and False)."""
    if merge_outputs:
        return outputs if layout.find("T") == 0 else _gluon_swap_time(outputs)
    return tf.unstack(outputs, axis=0)


def _gluon_batch_of(x):
    return x.shape[1] if x.shape[1] is not None else tf.shape(x)[1]


class _GluonRecurrentCell(TorchLayer):
    """Shared by Gluon's cells: begin_state, unroll (mxnet's RecurrentCell API) and reset."""

    porter_layout = "source"
    _gluon_keeps_tensors = False  # unroll(merge_outputs=None) of a tensor returns a tensor (DropoutCell)

    def state_info(self, batch_size=0):
        raise NotImplementedError

    def begin_state(self, batch_size=0, func=None, **kwargs):
        """A list of initial states, (batch_size, hidden) each: zeros unless `func` says otherwise."""
        dtype = _gluon_state_dtype(kwargs)
        return [_gluon_state_value(func, info["shape"], dtype) for info in self.state_info(batch_size)]

    def reset(self):
        """mxnet resets a cell's step counter before an unroll; the port has none."""

    def name_scope(self):
        return contextlib.nullcontext()

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None):
        """Run the cell over `length` steps of `inputs`: (outputs, final states) as mxnet's unroll returns them."""
        x = _gluon_time_major(length, inputs, layout)
        states = begin_state if begin_state is not None else self.begin_state(_gluon_batch_of(x), dtype=x.dtype)
        lengths = None if valid_length is None else tf.cast(tf.convert_to_tensor(valid_length), tf.int32)
        outputs, states = self._gluon_run(x, list(states), lengths)
        if merge_outputs is None:  # mxnet masks a merged tensor, and a tensor stays one
            merge_outputs = lengths is not None or (self._gluon_keeps_tensors and not isinstance(inputs, (list, tuple)))
        return _gluon_unroll_result(outputs, layout, merge_outputs), states

    def _gluon_run(self, x, states, lengths=None):
        """Time-major (T, N, C) inputs -> (time-major outputs, final states); `lengths` (N,) int32 or None: outputs
        past each length are zero and the states are those of its last valid step."""
        raise NotImplementedError


class _GluonGatedCell(_GluonRecurrentCell):
    """LSTMCell / GRUCell / RNNCell: `i2h_weight` (gates * hidden, input_size), `h2h_weight`, `i2h_bias`,
    `h2h_bias`; input_size=0 creates them on the first call or from the saved weights."""

    _gluon_gates = 1
    _gluon_state_count = 1

    def _gluon_cell_setup(self, hidden_size, input_size, kwargs):
        TorchLayer.__init__(self, **_gluon_keras_kwargs(kwargs))
        self.hidden_size, self.input_size = int(hidden_size), int(input_size or 0)
        self.i2h_weight = self.h2h_weight = self.i2h_bias = self.h2h_bias = None
        if self.input_size:
            self._gluon_create(self.input_size)

    def _gluon_create(self, input_size):
        self.input_size = int(input_size)
        size = self._gluon_gates * self.hidden_size
        init = uniform_fan_in(self.hidden_size)
        self.i2h_weight = self.add_weight(shape=(size, self.input_size), initializer=init, name="i2h_weight")
        self.h2h_weight = self.add_weight(shape=(size, self.hidden_size), initializer=init, name="h2h_weight")
        self.i2h_bias = self.add_weight(shape=(size,), initializer="zeros", name="i2h_bias")
        self.h2h_bias = self.add_weight(shape=(size,), initializer="zeros", name="h2h_bias")
        self.built = True

    def build(self, input_shape):
        if self.i2h_weight is None:
            self._gluon_create(input_shape[-1])
        self.built = True

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self.hidden_size), "__layout__": "NC"}] * self._gluon_state_count

    def torch_state(self, prefix=""):
        names = ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")
        if self.i2h_weight is not None:
            return [StateEntry(prefix + name, getattr(self, name)) for name in names]

        def sized(value):
            self._gluon_create(value.shape[1])
            return value

        return [StateEntry(prefix + name, GluonPendingVariable(self, name), sized if i == 0 else None)
                for i, name in enumerate(names)]

    def _gluon_params(self, dtype):
        return [_recurrent_cast(v, dtype) for v in (self.i2h_weight, self.h2h_weight, self.i2h_bias, self.h2h_bias)]

    def _gluon_projection(self, x, w_ih, b_ih, b_hh):
        """The input projection of one step or of all steps at once."""
        raise NotImplementedError

    def _gluon_step(self, x_gates, states, w_hh, b_hh):
        """One step from the projected input: (output, new states)."""
        raise NotImplementedError

    def call(self, inputs, states=None):
        x = tf.convert_to_tensor(inputs)
        if not x.dtype.is_floating:
            x = tf.cast(x, self.compute_dtype)
        if states is None:
            states = self.begin_state(_gluon_first_dim(x), dtype=x.dtype)
        states = [tf.cast(tf.convert_to_tensor(s), x.dtype) for s in
                  ([states] if tf.is_tensor(states) else states)]
        w_ih, w_hh, b_ih, b_hh = self._gluon_params(x.dtype)
        return self._gluon_step(self._gluon_projection(x, w_ih, b_ih, b_hh), states, w_hh, b_hh)

    def _gluon_run(self, x, states, lengths=None):
        if not self.built:
            self.build(x.shape)
        if not x.dtype.is_floating:
            x = tf.cast(x, self.compute_dtype)
        states = tuple(tf.cast(tf.convert_to_tensor(s), x.dtype) for s in states)
        w_ih, w_hh, b_ih, b_hh = self._gluon_params(x.dtype)
        projected = self._gluon_projection(x, w_ih, b_ih, b_hh)  # every step at once: one MatMul
        steps = x.shape[0] if x.shape[0] is not None else tf.shape(x)[0]
        valid = None
        if lengths is not None:  # a last column says whether the step is within its sequence
            valid = _gluon_valid_steps(x, lengths)
            projected = tf.concat([projected, valid], axis=-1)

        def step(direction, x_t, state):
            if valid is None:
                output, new_state = self._gluon_step(x_t, list(state), w_hh, b_hh)
                return tuple(new_state), output
            keep = x_t[:, -1:] > 0
            output, new_state = self._gluon_step(x_t[:, :-1], list(state), w_hh, b_hh)
            return tuple(tf.where(keep, new, old) for new, old in zip(new_state, state)), output

        outputs, (finals,) = _recurrent_scan([projected], [states], step, 0, steps, self.hidden_size)
        return (outputs if valid is None else outputs * valid), list(finals)

    def get_config(self):
        return {**super().get_config(), "hidden_size": self.hidden_size, "input_size": self.input_size}


def _gluon_valid_steps(x, lengths):
    """(T, N, 1): 1 where step t is within sequence n's length, else 0, in x's dtype."""
    steps = tf.range(tf.shape(x)[0])[:, None]
    return tf.cast(steps < tf.cast(lengths, tf.int32)[None, :], x.dtype)[:, :, None]


def _gluon_first_dim(x):
    return x.shape[0] if x.shape[0] is not None else tf.shape(x)[0]


class GluonLSTMCell(_GluonGatedCell):
    """gluon.rnn.LSTMCell: `cell(x, [h, c])` -> (h', [h', c'])."""

    _gluon_gates = 4
    _gluon_state_count = 2

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0, prefix=None, params=None,
                 activation="tanh", recurrent_activation="sigmoid", **kwargs):
        if activation != "tanh" or recurrent_activation != "sigmoid":
            raise NotImplementedError("gluon.rnn.LSTMCell with activation/recurrent_activation other than "
                                      "'tanh'/'sigmoid' is not supported by porter yet")
        self._gluon_cell_setup(hidden_size, input_size, kwargs)

    def _gluon_projection(self, x, w_ih, b_ih, b_hh):
        return _recurrent_project(x, w_ih, _recurrent_add_bias(b_ih, b_hh))

    def _gluon_step(self, x_gates, states, w_hh, b_hh):
        h, c = _recurrent_lstm_step(x_gates, states[0], states[1], w_hh, None, None)
        return h, [h, c]


class GluonGRUCell(_GluonGatedCell):
    """gluon.rnn.GRUCell: `cell(x, [h])` -> (h', [h'])."""

    _gluon_gates = 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0, prefix=None, params=None,
                 activation="tanh", recurrent_activation="sigmoid", **kwargs):
        if activation != "tanh" or recurrent_activation != "sigmoid":
            raise NotImplementedError("gluon.rnn.GRUCell with activation/recurrent_activation other than "
                                      "'tanh'/'sigmoid' is not supported by porter yet")
        self._gluon_cell_setup(hidden_size, input_size, kwargs)

    def _gluon_projection(self, x, w_ih, b_ih, b_hh):
        return _recurrent_project(x, w_ih, b_ih)

    def _gluon_step(self, x_gates, states, w_hh, b_hh):
        h = _recurrent_gru_step(x_gates, states[0], w_hh, b_hh)
        return h, [h]


class GluonRNNCell(_GluonGatedCell):
    """gluon.rnn.RNNCell: `cell(x, [h])` -> (h', [h']) with h' = activation(i2h(x) + h2h(h)); `activation` is any
    Gluon activation name (default 'tanh')."""

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0, prefix=None, params=None,
                 **kwargs):
        if not isinstance(activation, str):
            raise NotImplementedError("gluon.rnn.RNNCell with an activation block is not supported by porter yet; "
                                      "name the activation ('tanh', 'relu', ...)")
        self._gluon_cell_setup(hidden_size, input_size, kwargs)
        self.activation = activation

    def _gluon_projection(self, x, w_ih, b_ih, b_hh):
        return _recurrent_project(x, w_ih, _recurrent_add_bias(b_ih, b_hh))

    def _gluon_step(self, x_gates, states, w_hh, b_hh):
        h = gluon_activation(x_gates + tf.matmul(states[0], w_hh, transpose_b=True), self.activation)
        return h, [h]

    def get_config(self):
        return {**super().get_config(), "activation": self.activation}


class GluonSequentialRNNCell(_GluonRecurrentCell):
    """gluon.rnn.SequentialRNNCell / HybridSequentialRNNCell: cells stacked with `add(cell)`, children keyed "0",
    "1", ... as save_parameters names them; states are the cells' states one after the other."""

    def __init__(self, prefix=None, params=None, **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        self.cells = []
        self.built = True

    def add(self, cell):
        self.cells.append(cell)

    def __getitem__(self, index):
        return self.cells[index]

    def __len__(self):
        return len(self.cells)

    def state_info(self, batch_size=0):
        return [info for cell in self.cells for info in cell.state_info(batch_size)]

    def begin_state(self, batch_size=0, func=None, **kwargs):
        return [state for cell in self.cells for state in cell.begin_state(batch_size=batch_size, func=func,
                                                                             **kwargs)]

    def _gluon_split(self, states):
        parts, start = [], 0
        for cell in self.cells:
            count = len(cell.state_info())
            parts.append(list(states[start:start + count]))
            start += count
        return parts

    def call(self, inputs, states=None):
        if states is None:
            states = self.begin_state(_gluon_first_dim(tf.convert_to_tensor(inputs)))
        next_states = []
        for cell, state in zip(self.cells, self._gluon_split(list(states))):
            if isinstance(cell, GluonBidirectionalCell):
                raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")
            inputs, state = cell(inputs, state)
            next_states.extend(state)
        return inputs, next_states

    def _gluon_run(self, x, states, lengths=None):
        finals = []
        for cell, state in zip(self.cells, self._gluon_split(states)):
            x, state = cell._gluon_run(x, state, lengths)
            finals.extend(state)
        return x, finals

    def torch_state(self, prefix=""):
        return [entry for index, cell in enumerate(self.cells) for entry in cell.torch_state(f"{prefix}{index}.")]

    def get_config(self):
        return {**super().get_config()}


class GluonBidirectionalCell(_GluonRecurrentCell):
    """gluon.rnn.BidirectionalCell(l_cell, r_cell): unroll only; outputs of both directions concatenated on the
    feature axis, states l_cell's then r_cell's; parameters under `l_cell.` and `r_cell.`."""

    def __init__(self, l_cell, r_cell, output_prefix="bi_", **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        self.l_cell, self.r_cell = l_cell, r_cell
        self.built = True

    def state_info(self, batch_size=0):
        return self.l_cell.state_info(batch_size) + self.r_cell.state_info(batch_size)

    def begin_state(self, batch_size=0, func=None, **kwargs):
        return self.l_cell.begin_state(batch_size=batch_size, func=func, **kwargs) + \
            self.r_cell.begin_state(batch_size=batch_size, func=func, **kwargs)

    def call(self, inputs, states=None):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def _gluon_run(self, x, states, lengths=None):
        count = len(self.l_cell.state_info())

        def reverse(y):  # mxnet's SequenceReverse: only each sequence's valid steps
            if lengths is None:
                return tf.reverse(y, axis=[0])
            return tf.reverse_sequence(y, tf.broadcast_to(tf.cast(lengths, tf.int32), tf.shape(y)[1:2]), seq_axis=0,
                                       batch_axis=1)

        forward, l_states = self.l_cell._gluon_run(x, list(states[:count]), lengths)
        backward, r_states = self.r_cell._gluon_run(reverse(x), list(states[count:]), lengths)
        return tf.concat([forward, reverse(backward)], axis=-1), l_states + r_states

    def torch_state(self, prefix=""):
        return self.l_cell.torch_state(prefix + "l_cell.") + self.r_cell.torch_state(prefix + "r_cell.")


class GluonDropoutCell(_GluonRecurrentCell):
    """gluon.rnn.DropoutCell(rate, axes=()): dropout on the input in training, no states, no parameters."""

    _gluon_keeps_tensors = True

    def __init__(self, rate, axes=(), prefix=None, params=None, **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        self.rate, self.axes = float(rate), tuple(axes)
        self._gluon_seed = keras.random.SeedGenerator() if self.rate > 0 else None
        self.built = True

    def state_info(self, batch_size=0):
        return []

    def _gluon_dropout(self, x, training):
        training = call_in_training() if training is None else training
        if not training or self._gluon_seed is None:
            return x
        shape = None
        if self.axes:
            shape = [1 if axis in self.axes else size for axis, size in enumerate(tf.unstack(tf.shape(x)))]
        return keras.random.dropout(x, self.rate, noise_shape=shape, seed=self._gluon_seed)

    def call(self, inputs, states=None, training=None):
        return self._gluon_dropout(tf.convert_to_tensor(inputs), training), list(states or [])

    def _gluon_run(self, x, states, lengths=None):
        return self._gluon_dropout(x, None), list(states)  # mxnet's DropoutCell leaves valid_length out


class GluonZoneoutCell(_GluonRecurrentCell):
    """gluon.rnn.ZoneoutCell(base_cell, zoneout_outputs, zoneout_states): in inference the base cell itself (mxnet's
    zoneout masks are all ones then); training with zoneout is refused. Parameters under `base_cell.`."""

    def __init__(self, base_cell, zoneout_outputs=0.0, zoneout_states=0.0, **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        self.base_cell = base_cell
        self.zoneout_outputs, self.zoneout_states = float(zoneout_outputs), float(zoneout_states)
        self.built = True

    def _gluon_check(self, training):
        training = call_in_training() if training is None else training
        if training and (self.zoneout_outputs or self.zoneout_states):
            raise NotImplementedError("gluon.rnn.ZoneoutCell in training mode is not supported by porter yet")

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, batch_size=0, func=None, **kwargs):
        return self.base_cell.begin_state(batch_size=batch_size, func=func, **kwargs)

    def call(self, inputs, states=None, training=None):
        self._gluon_check(training)
        return self.base_cell(inputs, states)

    def _gluon_run(self, x, states, lengths=None):
        self._gluon_check(None)
        return self.base_cell._gluon_run(x, states, lengths)

    def torch_state(self, prefix=""):
        return self.base_cell.torch_state(prefix + "base_cell.")


class GluonResidualCell(_GluonRecurrentCell):
    """gluon.rnn.ResidualCell(base_cell): the base cell's output plus its input; the base cell's parameters are
    the model's (`base_cell.` keys)."""

    def __init__(self, base_cell, **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        self.base_cell = base_cell
        self.built = True

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, batch_size=0, func=None, **kwargs):
        return self.base_cell.begin_state(batch_size=batch_size, func=func, **kwargs)

    def call(self, inputs, states=None):
        output, states = self.base_cell(inputs, states)
        return output + tf.convert_to_tensor(inputs), states

    def _gluon_run(self, x, states, lengths=None):
        outputs, states = self.base_cell._gluon_run(x, states, lengths)
        return outputs + (x if lengths is None else x * _gluon_valid_steps(x, lengths)), states

    def torch_state(self, prefix=""):
        return self.base_cell.torch_state(prefix + "base_cell.")
