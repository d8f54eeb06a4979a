"""torch.nn.RNN / LSTM / GRU and RNNCell / LSTMCell / GRUCell as Keras layers with torch semantics.

Parameters keep torch's names (`weight_ih_l0`, `bias_hh_l1_reverse`, `weight_hr_l0` ...) and torch's layout
(gates stacked on axis 0 in torch's order: i, f, g, o for LSTM; r, z, n for GRU), so weights load unchanged.

The recurrence is a `tf.while_loop` over the (static in practice) time length: the input projection of every
timestep is one MatMul outside the loop; the loop reads step t with a Gather on the time axis, runs both
directions of a bidirectional layer in the same iteration, and writes outputs to TensorArrays. No Transpose op
is emitted: batch-first inputs are read in place (Gather on axis 1), inner layers run time-major, and the final
batch-first output is reordered with one row Gather (measured as fast as a Transpose, with and without XLA).

A packed input (porter/runtime/packed_sequence.py's PackedSequence, recognised by its `lengths` so that ports
without packing do not carry the class) runs masked: past a sequence's length its state is held and its outputs
are zeros, so the final states are those of each sequence's last valid step and a reversed direction starts at
its own last valid step; the output is packed again (same lengths, the input's batch_first).
"""

import numbers

import keras
import tensorflow as tf

from porter.runtime.base import StateEntry, TorchLayer, uniform_fan_in

_RECURRENT_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _recurrent_cast(value, dtype):
    return None if value is None else tf.cast(value, dtype)


def _recurrent_project(x, weight, bias):
    """x @ weight.T + bias on the last axis of a tensor of any rank (leading axes folded: one plain MatMul)."""
    if len(x.shape) == 2:
        y = tf.matmul(x, weight, transpose_b=True)
    else:
        leading = tf.shape(x)[:-1]
        y = tf.matmul(tf.reshape(x, [-1, x.shape[-1]]), weight, transpose_b=True)
        y = tf.reshape(y, tf.concat([leading, [weight.shape[0]]], axis=0))
        y.set_shape(x.shape[:-1].concatenate([weight.shape[0]]))
    return y if bias is None else y + bias


def _recurrent_add_bias(a, b):
    if a is None:
        return b
    return a if b is None else a + b


def _recurrent_simple_step(x_gates, h, w_hh, b_hh, nonlinearity):
    """Elman RNN step: act(x_gates + h @ W_hh.T [+ b_hh]); x_gates already holds W_ih x + b_ih."""
    pre = x_gates + tf.matmul(h, w_hh, transpose_b=True)
    if b_hh is not None:
        pre = pre + b_hh
    return tf.tanh(pre) if nonlinearity == "tanh" else tf.nn.relu(pre)


def _recurrent_lstm_step(x_gates, h, c, w_hh, b_hh, w_hr):
    """LSTM step in torch's gate order (i, f, g, o); returns (h', c'). `w_hr` projects h' when proj_size > 0."""
    gates = x_gates + tf.matmul(h, w_hh, transpose_b=True)
    if b_hh is not None:
        gates = gates + b_hh
    i, f, g, o = tf.split(gates, 4, axis=-1)
    c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
    h = tf.sigmoid(o) * tf.tanh(c)
    if w_hr is not None:
        h = tf.matmul(h, w_hr, transpose_b=True)
    return h, c


def _recurrent_gru_step(x_gates, h, w_hh, b_hh):
    """GRU step in torch's gate order (r, z, n): n = tanh(W_in x + b_in + r * (W_hn h + b_hn))."""
    h_gates = tf.matmul(h, w_hh, transpose_b=True)
    if b_hh is not None:
        h_gates = h_gates + b_hh
    x_r, x_z, x_n = tf.split(x_gates, 3, axis=-1)
    h_r, h_z, h_n = tf.split(h_gates, 3, axis=-1)
    r = tf.sigmoid(x_r + h_r)
    z = tf.sigmoid(x_z + h_z)
    n = tf.tanh(x_n + r * h_n)
    return (h - n) * z + n


def _recurrent_batch_major(y):
    """(T, B, F) -> (B, T, F) without a Transpose op: a reshape when T or B is 1, else one Gather of rows."""
    steps, batch, features = y.shape
    dyn = tf.shape(y)
    steps_t = dyn[0] if steps is None else steps
    batch_t = dyn[1] if batch is None else batch
    if steps == 1 or batch == 1:
        out = tf.reshape(y, tf.stack([batch_t, steps_t, features]))
    else:
        rows = tf.reshape(tf.range(steps_t)[None, :] * batch_t + tf.range(batch_t)[:, None], [-1])
        out = tf.gather(tf.reshape(y, [-1, features]), rows)
        out = tf.reshape(out, tf.stack([batch_t, steps_t, features]))
    out.set_shape([batch, steps, features])
    return out


def _recurrent_scan(inputs, states, step, time_axis, steps, out_size, lengths=None):
    """Run one layer (all its directions) over time.

    inputs: per direction, the input projection (time on `time_axis`); states: per direction, a tuple of state
    tensors; step(d, x_t, state) -> (state, output). Direction d > 0 runs reversed. Returns the time-major
    outputs concatenated over directions on the last axis, and the final states. `lengths` (B,) int32: steps at or
    past a sequence's length keep its state and output zeros (a packed sequence).
    """
    dtype = inputs[0].dtype
    batch = inputs[0].shape[1 - time_axis]
    count = len(inputs)
    arrays = tuple(tf.TensorArray(dtype, size=steps, element_shape=tf.TensorShape([batch, out_size]))
                   for _ in range(count))
    last = steps - 1

    def body(t, states, arrays):
        new_states, new_arrays = [], []
        for d in range(count):
            index = last - t if d else t
            x_t = tf.gather(inputs[d], index, axis=time_axis)
            state, out = step(d, x_t, states[d])
            if lengths is not None:
                valid = (index < lengths)[:, None]
                state = tuple(tf.where(valid, new, old) for new, old in zip(state, states[d]))
                out = tf.where(valid, out, tf.zeros_like(out))
            new_states.append(state)
            new_arrays.append(arrays[d].write(index, out))
        return t + 1, tuple(new_states), tuple(new_arrays)

    _, states, arrays = tf.while_loop(lambda t, *_: t < steps, body, (tf.constant(0), tuple(states), arrays),
                                      maximum_iterations=steps)
    outputs = [array.stack() for array in arrays]
    for out in outputs:
        out.set_shape([steps if isinstance(steps, int) else None, batch, out_size])
    return (outputs[0] if count == 1 else tf.concat(outputs, axis=-1)), states


class _RecurrentBase(TorchLayer):
    """Shared body of RNN / LSTM / GRU (torch.nn.RNNBase): parameters, state handling and the layer stack."""

    porter_layout = "source"

    def _recurrent_setup(self, mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size):
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if not isinstance(input_size, int) or input_size <= 0:
            raise ValueError(f"input_size must be a positive int, got {input_size!r}")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError(f"hidden_size must be a positive int, got {hidden_size!r}")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        directions = 2 if bidirectional else 1
        gate_size = _RECURRENT_GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        init = uniform_fan_in(hidden_size)
        self._recurrent_suffixes = []
        for layer in range(num_layers):
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                layer_input = input_size if layer == 0 else real_hidden * directions
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + suffix, self.add_weight(shape=shape, initializer=init, name=name + suffix))
                self._recurrent_suffixes.append(suffix)
        self._recurrent_seed = (keras.random.SeedGenerator() if self.dropout > 0 and num_layers > 1 else None)
        self._allow_non_tensor_positional_args = True  # a packed sequence comes positionally, as in torch
        self.finish_init()

    @property
    def _flat_weights_names(self):
        """torch's RNNBase._flat_weights_names: the parameter names, layer by layer (init code walks them and reads
        `_parameters[name]`)."""
        return [entry.key for entry in self.torch_state()]

    @property
    def _parameters(self):
        """torch's Module._parameters of an RNN: name -> parameter."""
        return {entry.key: entry.variable for entry in self.torch_state()}

    def flatten_parameters(self):
        """torch's cuDNN weight compaction (`self.lstm.flatten_parameters()` in __init__ or forward): nothing to do."""

    def _recurrent_param(self, name, suffix, dtype):
        return _recurrent_cast(getattr(self, name + suffix, None), dtype)

    def torch_state(self, prefix=""):
        entries = []
        for suffix in self._recurrent_suffixes:
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"):
                variable = getattr(self, name + suffix, None)
                if variable is not None:
                    entries.append(StateEntry(prefix + name + suffix, variable))
        return entries

    def get_config(self):
        return {**super().get_config(), "input_size": self.input_size, "hidden_size": self.hidden_size,
                "num_layers": self.num_layers, "bias": self.bias, "batch_first": self.batch_first,
                "dropout": self.dropout, "bidirectional": self.bidirectional}

    def _recurrent_split_hx(self, hx, dtype, batched):
        """torch hx -> (h0, c0) tensors of shape (D*L, B, H) or None each."""
        if hx is None:
            return None, None
        if self.mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise ValueError("LSTM expects hx as a tuple (h_0, c_0)")
            h0, c0 = (tf.cast(tf.convert_to_tensor(v), dtype) for v in hx)
        else:
            h0, c0 = tf.cast(tf.convert_to_tensor(hx), dtype), None
        expected_rank = 3 if batched else 2
        for value, name in ((h0, "h_0"), (c0, "c_0")):
            if value is not None and len(value.shape) != expected_rank:
                raise ValueError(f"For {'batched' if batched else 'unbatched'} {expected_rank}-D input, {name} "
                                 f"should be {expected_rank}-D but got {len(value.shape)}-D tensor")
        if not batched:
            h0 = tf.expand_dims(h0, 1)
            c0 = None if c0 is None else tf.expand_dims(c0, 1)
        return h0, c0

    def call(self, x, hx=None, training=None, swapped=False):
        """`swapped`: the caller holds the (batched) input with its first two axes swapped (a sequence-first layer
        handed `x.permute(1, 0, 2)` of a batch-first sequence): the layer scans the axis that holds time and gives
        its output swapped alike; hx and h_n are as torch's."""
        packed = x if hasattr(x, "lengths") and hasattr(x, "padded") else None
        if packed is not None:  # Keras' autocast does not reach inside it
            x = tf.convert_to_tensor(packed.padded)
            x = tf.cast(x, self.compute_dtype) if x.dtype.is_floating and self.autocast else x
        x = tf.convert_to_tensor(x)
        if not x.dtype.is_floating:
            x = tf.cast(x, self.compute_dtype)
        dtype = x.dtype
        rank = len(x.shape)
        if rank not in (2, 3):
            raise ValueError(f"{type(self).__name__}: expected input to be 2D or 3D, got {rank}D")
        if x.shape[-1] is not None and x.shape[-1] != self.input_size:
            raise ValueError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                             f"got {x.shape[-1]}")
        batched = rank == 3
        if packed is not None and not batched:
            raise ValueError(f"{type(self).__name__}: a packed sequence must hold a 3-D padded tensor, got {rank}D")
        h0, c0 = self._recurrent_split_hx(hx, dtype, batched)
        if not batched:
            x = tf.expand_dims(x, 1)  # (T, I) -> (T, 1, I), time-major
        batch_first = packed.batch_first if packed is not None else (self.batch_first != bool(swapped)) and batched
        time_axis = 1 if batch_first else 0
        steps = x.shape[time_axis]
        if steps is None:
            steps = tf.shape(x)[time_axis]
        batch = x.shape[1 - time_axis]
        batch_t = tf.shape(x)[1 - time_axis] if batch is None else batch
        directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        lstm, gru = self.mode == "LSTM", self.mode == "GRU"
        nonlinearity = "relu" if self.mode == "RNN_RELU" else "tanh"
        h_finals, c_finals = [], []
        layer_input = x
        for layer in range(self.num_layers):
            inputs, states, recurrent = [], [], []
            for direction in range(directions):
                index = layer * directions + direction
                suffix = self._recurrent_suffixes[index]
                w_ih, w_hh, b_ih, b_hh, w_hr = (self._recurrent_param(name, suffix, dtype) for name in
                                                ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))
                if not gru:  # fold both biases into the precomputed input projection
                    b_ih, b_hh = _recurrent_add_bias(b_ih, b_hh), None
                inputs.append(_recurrent_project(layer_input, w_ih, b_ih))
                recurrent.append((w_hh, b_hh, w_hr))
                zeros = tf.zeros(tf.stack([batch_t, real_hidden]), dtype)
                h = zeros if h0 is None else h0[index]
                if lstm:
                    c = tf.zeros(tf.stack([batch_t, self.hidden_size]), dtype) if c0 is None else c0[index]
                    states.append((h, c))
                else:
                    states.append((h,))

            def step(d, x_t, state, recurrent=recurrent):
                w_hh, b_hh, w_hr = recurrent[d]
                if lstm:
                    h, c = _recurrent_lstm_step(x_t, state[0], state[1], w_hh, b_hh, w_hr)
                    return (h, c), h
                if gru:
                    h = _recurrent_gru_step(x_t, state[0], w_hh, b_hh)
                else:
                    h = _recurrent_simple_step(x_t, state[0], w_hh, b_hh, nonlinearity)
                return (h,), h

            layer_input, finals = _recurrent_scan(inputs, states, step, time_axis if layer == 0 else 0, steps,
                                                  real_hidden, None if packed is None else packed.lengths)
            for state in finals:
                h_finals.append(state[0])
                if lstm:
                    c_finals.append(state[1])
            if training and self._recurrent_seed is not None and layer < self.num_layers - 1:
                if self.dropout >= 1:
                    layer_input = tf.zeros_like(layer_input)
                else:
                    layer_input = keras.random.dropout(layer_input, self.dropout, seed=self._recurrent_seed)
        output = layer_input  # time-major (T, B, D*H)
        if batch_first:
            output = _recurrent_batch_major(output)
        h_n = tf.stack(h_finals, axis=0)
        c_n = tf.stack(c_finals, axis=0) if lstm else None
        if not batched:
            output = tf.squeeze(output, 1)
            h_n = tf.squeeze(h_n, 1)
            c_n = None if c_n is None else tf.squeeze(c_n, 1)
        if packed is not None:
            output = packed.with_padded(output)
        return (output, (h_n, c_n)) if lstm else (output, h_n)


class RNN(_RecurrentBase):
    """torch.nn.RNN (Elman, tanh or relu): call(x, hx=None, training=None) -> (output, h_n) as torch."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        self._recurrent_setup("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size,
                              num_layers, bias, batch_first, dropout, bidirectional, 0)

    def get_config(self):
        return {**super().get_config(), "nonlinearity": self.nonlinearity}


class LSTM(_RecurrentBase):
    """torch.nn.LSTM (with proj_size): call(x, hx=None, training=None) -> (output, (h_n, c_n)) as torch."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        self._recurrent_setup("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                              bidirectional, proj_size)

    def get_config(self):
        return {**super().get_config(), "proj_size": self.proj_size}


class GRU(_RecurrentBase):
    """torch.nn.GRU: call(x, hx=None, training=None) -> (output, h_n) as torch."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        self._recurrent_setup("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                              bidirectional, 0)


class _RecurrentCellBase(TorchLayer):
    """Shared body of RNNCell / LSTMCell / GRUCell (torch.nn.RNNCellBase): one timestep, torch parameter names."""

    porter_layout = "source"

    def _recurrent_cell_setup(self, input_size, hidden_size, bias, gates):
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        init = uniform_fan_in(hidden_size)
        self.weight_ih = self.add_weight(shape=(gates * hidden_size, input_size), initializer=init, name="weight_ih")
        self.weight_hh = self.add_weight(shape=(gates * hidden_size, hidden_size), initializer=init, name="weight_hh")
        if bias:
            self.bias_ih = self.add_weight(shape=(gates * hidden_size,), initializer=init, name="bias_ih")
            self.bias_hh = self.add_weight(shape=(gates * hidden_size,), initializer=init, name="bias_hh")
        else:
            self.bias_ih = self.bias_hh = None
        self.finish_init()

    def torch_state(self, prefix=""):
        entries = [StateEntry(prefix + "weight_ih", self.weight_ih), StateEntry(prefix + "weight_hh", self.weight_hh)]
        if self.bias_ih is not None:
            entries += [StateEntry(prefix + "bias_ih", self.bias_ih), StateEntry(prefix + "bias_hh", self.bias_hh)]
        return entries

    def get_config(self):
        return {**super().get_config(), "input_size": self.input_size, "hidden_size": self.hidden_size,
                "bias": self.bias}

    def _recurrent_cell_inputs(self, x, hx):
        """-> (x as (B, I), [state tensors as (B, H)], batched, dtype, params)."""
        x = tf.convert_to_tensor(x)
        if not x.dtype.is_floating:
            x = tf.cast(x, self.compute_dtype)
        dtype = x.dtype
        if len(x.shape) not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {len(x.shape)}D instead")
        batched = len(x.shape) == 2
        if not batched:
            x = tf.expand_dims(x, 0)
        batch = tf.shape(x)[0] if x.shape[0] is None else x.shape[0]
        count = 2 if isinstance(self, LSTMCell) else 1
        if hx is None:
            states = [tf.zeros(tf.stack([batch, self.hidden_size]), dtype) for _ in range(count)]
        else:
            states = list(hx) if count == 2 else [hx]
            states = [tf.cast(tf.convert_to_tensor(s), dtype) for s in states]
            if not batched:
                states = [tf.expand_dims(s, 0) for s in states]
        params = [_recurrent_cast(v, dtype) for v in (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)]
        return x, states, batched, params


class RNNCell(_RecurrentCellBase):
    """torch.nn.RNNCell: call(x, hx=None) -> h'."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        self._recurrent_cell_setup(input_size, hidden_size, bias, 1)

    def call(self, x, hx=None):
        x, (h,), batched, (w_ih, w_hh, b_ih, b_hh) = self._recurrent_cell_inputs(x, hx)
        h = _recurrent_simple_step(_recurrent_project(x, w_ih, _recurrent_add_bias(b_ih, b_hh)), h, w_hh, None,
                                   self.nonlinearity)
        return h if batched else tf.squeeze(h, 0)

    def get_config(self):
        return {**super().get_config(), "nonlinearity": self.nonlinearity}


class LSTMCell(_RecurrentCellBase):
    """torch.nn.LSTMCell: call(x, hx=None) with hx = (h, c) -> (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        self._recurrent_cell_setup(input_size, hidden_size, bias, 4)

    def call(self, x, hx=None):
        x, (h, c), batched, (w_ih, w_hh, b_ih, b_hh) = self._recurrent_cell_inputs(x, hx)
        h, c = _recurrent_lstm_step(_recurrent_project(x, w_ih, _recurrent_add_bias(b_ih, b_hh)), h, c, w_hh, None,
                                    None)
        return (h, c) if batched else (tf.squeeze(h, 0), tf.squeeze(c, 0))


class GRUCell(_RecurrentCellBase):
    """torch.nn.GRUCell: call(x, hx=None) -> h'."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        self._recurrent_cell_setup(input_size, hidden_size, bias, 3)

    def call(self, x, hx=None):
        x, (h,), batched, (w_ih, w_hh, b_ih, b_hh) = self._recurrent_cell_inputs(x, hx)
        h = _recurrent_gru_step(_recurrent_project(x, w_ih, b_ih), h, w_hh, b_hh)
        return h if batched else tf.squeeze(h, 0)
