"""torch.nn.Linear / Bilinear / Identity as Keras layers (torch weight orientation kept, so weights can be tied)."""

import tensorflow as tf

from porter.runtime.base import StateEntry, TorchLayer, to_channels_first, to_channels_last, uniform_fan_in


class Linear(TorchLayer):
    """torch.nn.Linear: y = x @ W.T + b on the last axis. W is kept as torch's (out, in) so tying works."""

    porter_layout = "source"
    last_axis_only = True  # computes along the last axis alone: tokens held in another order run as they lie

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        self.in_features, self.out_features, self.use_bias = in_features, out_features, bias
        self.make_weights(in_features)
        self.finish_init()

    def make_weights(self, in_features):
        """weight (out, in) and bias, torch's init; LazyLinear calls it once the input gives `in_features`."""
        self.in_features = in_features
        init = uniform_fan_in(in_features)
        self.weight = self.add_weight(shape=(self.out_features, in_features), initializer=init, name="weight")
        self.bias = self.add_weight(shape=(self.out_features,), initializer=init, name="bias") if self.use_bias \
            else None

    def reset_parameters(self):
        """torch's reset_parameters: weight and bias drawn again from torch's default init (for a subclass's own)."""
        init = uniform_fan_in(self.in_features)
        for variable in (self.weight, self.bias):
            if variable is not None:
                variable.assign(init(variable.shape, variable.dtype))

    def call(self, x, layout=None, layout_out=None):
        """`layout` / `layout_out`: the layouts a caller holds `x` in and wants the result in (see `runs_in`); by
        default torch's order. On a channels-last tensor of rank > 2 the dim torch contracts (its last) is stored
        second to last: a broadcast matmul contracts it there and the result stays channels-last (MLP-Mixer's
        token mixing after `x.transpose(1, 2)` of a (b, n, c) sequence moves no data)."""
        y = linear(x, self.weight, self.bias, layout=layout)
        if layout == "channels_last" and len(x.shape) > 2:
            return to_channels_first(y) if layout_out == "source" else y
        return to_channels_last(y) if layout_out == "channels_last" else y

    def runs_in(self, layout):
        """Torch's order, and channels-last too (not a subclass with a forward of its own)."""
        return type(self).call is Linear.call and layout in ("source", "channels_last")

    def torch_state(self, prefix=""):
        entries = [StateEntry(prefix + "weight", self.weight)]
        if self.bias is not None:
            entries.append(StateEntry(prefix + "bias", self.bias))
        return entries

    def get_config(self):
        return {**super().get_config(), "in_features": self.in_features, "out_features": self.out_features,
                "bias": self.use_bias}


class Identity(TorchLayer):
    """torch.nn.Identity: returns its input (any extra constructor arguments are ignored, as in torch)."""

    porter_layout = "any"

    def __init__(self, *args, **kwargs):
        super().__init__(**{k: v for k, v in kwargs.items() if k in ("name", "dtype", "trainable")})
        self.finish_init()

    def call(self, x):
        return x


def _linear_add_bias(y, bias):
    """y + bias on the last axis; a 1-D bias as a BiasAdd op, which grappler fuses into the preceding MatMul."""
    if bias is None:
        return y
    if len(getattr(bias, "shape", ())) == 1:
        return tf.nn.bias_add(y, tf.cast(bias, y.dtype))
    return y + bias


def linear(x, weight, bias=None, layout=None):
    """torch.nn.functional.linear with a torch-oriented (out, in) weight. `layout="channels_last"`: `x` (rank > 2)
    is held channels-last, the dim torch contracts (its last) stored second to last: a broadcast matmul contracts it
    there and the result stays channels-last (MLP-Mixer's token mixing after `x.transpose(1, 2)` of a (b, n, c)
    sequence moves no data)."""
    if layout == "channels_last" and len(x.shape) > 2:
        y = tf.matmul(tf.cast(weight, x.dtype), x)
        return y if bias is None else y + tf.reshape(tf.cast(bias, y.dtype), (-1, 1))
    if len(x.shape) == 2:
        return _linear_add_bias(tf.matmul(x, weight, transpose_b=True), bias)
    # fold leading axes into one: a plain MatMul (no Transpose op in the graph), the bias added before unfolding
    leading = tf.shape(x)[:-1]
    y = _linear_add_bias(tf.matmul(tf.reshape(x, [-1, x.shape[-1]]), weight, transpose_b=True), bias)
    return tf.reshape(y, tf.concat([leading, [weight.shape[0]]], axis=0))


class Bilinear(TorchLayer):
    """torch.nn.Bilinear: y = x1^T W x2 + b with W of torch's shape (out, in1, in2); call(input1, input2)."""

    porter_layout = "source"

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.use_bias = bias
        init = uniform_fan_in(in1_features)  # torch: U(-1/sqrt(in1), 1/sqrt(in1)) for weight and bias
        self.weight = self.add_weight(shape=(out_features, in1_features, in2_features), initializer=init,
                                      name="weight")
        self.bias = self.add_weight(shape=(out_features,), initializer=init, name="bias") if bias else None
        self.finish_init()

    def call(self, input1, input2):
        return bilinear(input1, input2, self.weight, self.bias)

    def torch_state(self, prefix=""):
        entries = [StateEntry(prefix + "weight", self.weight)]
        if self.bias is not None:
            entries.append(StateEntry(prefix + "bias", self.bias))
        return entries

    def get_config(self):
        return {**super().get_config(), "in1_features": self.in1_features, "in2_features": self.in2_features,
                "out_features": self.out_features, "bias": self.use_bias}


def bilinear(input1, input2, weight, bias=None):
    """F.bilinear: y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] (+ b[o]).

    One MatMul and reshapes, no Transpose: z = x2 @ W.reshape(out * in1, in2).T, y = sum_i z[., o, i] x1[., i].
    """
    x1 = input1 if isinstance(input1, (tf.Tensor, tf.Variable)) else tf.convert_to_tensor(input1)
    x2 = input2 if isinstance(input2, (tf.Tensor, tf.Variable)) else tf.convert_to_tensor(input2)
    out_features, in1_features, in2_features = weight.shape
    w = tf.reshape(tf.cast(weight, x2.dtype), [out_features * in1_features, in2_features])
    leading = tf.shape(x1)[:-1]
    z = tf.matmul(tf.reshape(x2, [-1, in2_features]), w, transpose_b=True)
    z = tf.reshape(z, [-1, out_features, in1_features])
    y = tf.reduce_sum(z * tf.expand_dims(tf.reshape(x1, [-1, in1_features]), 1), axis=-1)
    if bias is not None:
        y = y + tf.cast(bias, y.dtype)
    if len(x1.shape) == 2:
        return y
    return tf.reshape(y, tf.concat([leading, [out_features]], axis=0))
