"""torch.nn.Linear / Bilinear / Identity as Keras layers (torch weight orientation kept, so weights can be tied)."""

import tensorflow as tf

from porter.runtime.base import StateEntry, TorchLayer, uniform_fan_in


class Linear(TorchLayer):
    """torch.nn.Linear: y = x @ W.T + b on the last axis. W is kept as torch's (out, in) so tying works."""

    porter_layout = "source"

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        self.in_features, self.out_features, self.use_bias = in_features, out_features, bias
        init = uniform_fan_in(in_features)
        self.weight = self.add_weight(shape=(out_features, in_features), initializer=init, name="weight")
        self.bias = self.add_weight(shape=(out_features,), initializer=init, name="bias") if bias else None
        self.finish_init()

    def call(self, x):
        return linear(x, self.weight, self.bias)

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


def linear(x, weight, bias=None):
    """torch.nn.functional.linear with a torch-oriented (out, in) weight."""
    if len(x.shape) == 2:
        y = tf.matmul(x, weight, transpose_b=True)
    else:  # fold leading axes into one: a plain MatMul, no Transpose op in the graph
        leading = tf.shape(x)[:-1]
        y = tf.matmul(tf.reshape(x, [-1, x.shape[-1]]), weight, transpose_b=True)
        y = tf.reshape(y, tf.concat([leading, [weight.shape[0]]], axis=0))
    return y + bias if bias is not None else y
