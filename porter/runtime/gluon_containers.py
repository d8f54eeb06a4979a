"""Gluon's containers: Sequential and HybridSequential (torch's runtime Sequential plus Gluon's `add(*blocks)`),
contrib.nn's HybridConcurrent/Concurrent (children side by side, outputs concatenated) and Identity.

Children are keyed "0", "1", ... in the order they were added, which is how `save_parameters` names them
(`features.3.weight`).
"""

import contextlib

import tensorflow as tf

from porter.runtime.base import TorchLayer
from porter.runtime.gluon_layers import gluon_collect_params
from porter.runtime.module import Sequential, _layout_of, _to_layout


class GluonSequential(Sequential):
    """gluon.nn.Sequential / HybridSequential (`prefix`/`params`, by position or keyword, accepted and ignored: a
    Gluon container starts empty and is filled by `add`)."""

    def __init__(self, prefix=None, params=None, **kwargs):
        super().__init__(**kwargs)

    def add(self, *blocks):
        """Append `blocks` in order, as Gluon's `Sequential.add` does."""
        for block in blocks:
            self.names.append(str(len(self.items)))
            self.items.append(block)

    def name_scope(self):
        """`with out.name_scope():` names parameters in mxnet; in the port it is an empty context."""
        return contextlib.nullcontext()

    def collect_params(self, select=None):
        """Its variables by state name (`nn.Dense(..., params=embed.collect_params())` shares them)."""
        return gluon_collect_params(self)


class GluonConcurrent(GluonSequential):
    """gluon.contrib.nn.HybridConcurrent / Concurrent(axis=-1): every child reads the same input and their outputs
    are concatenated on `axis` (in Gluon's own axis order; remapped for channels-last tensors).

    The port hands it channels-last input and reads channels-last output (Gluon's `axis=1` is the channel axis of
    an image): each child gets the layout it runs in, and its output comes back channels-last before the concat."""

    porter_layout = "channels_last"
    layout_out = "channels_last"

    def __init__(self, axis=-1, prefix=None, params=None, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, x, training=None):
        outputs = []
        for layer in self.items:
            wanted = _layout_of(layer)
            y = layer(_to_layout(x, "channels_last", wanted)[0])
            produced = getattr(layer, "layout_out", None) or (wanted if wanted != "any" else "channels_last")
            outputs.append(_to_layout(y, produced, "channels_last")[0])
        rank = len(outputs[0].shape)
        return tf.concat(outputs, axis=gluon_channels_last_axis(self.axis, rank))

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def gluon_channels_last_axis(axis, rank):
    """Gluon's axis `axis` of a rank-`rank` tensor in its channels-last order (rank <= 2: unchanged)."""
    axis = axis % rank
    if rank <= 2 or axis == 0:
        return axis
    return rank - 1 if axis == 1 else axis - 1


class GluonIdentity(TorchLayer):
    """gluon.contrib.nn.Identity: returns its input."""

    porter_layout = "any"

    def __init__(self, prefix=None, params=None, **kwargs):
        super().__init__(**{k: v for k, v in kwargs.items() if k in ("name", "dtype", "trainable")})
        self.finish_init()

    def call(self, x):
        return x
