"""gluon.nn.Embedding(input_dim, output_dim) as a Keras layer with mxnet 1.9.1's semantics: `weight` is the
(input_dim, output_dim) table `save_parameters` writes; indices may be floats (Gluon's usual float32 token ids),
are truncated to integers and clipped into [0, input_dim - 1] as mxnet's Embedding operator does."""

import tensorflow as tf

from porter.runtime.base import StateEntry, TorchLayer
from porter.runtime.gluon_layers import _gluon_keras_kwargs, _gluon_xavier


class GluonEmbedding(TorchLayer):
    """gluon.nn.Embedding: (..., ) indices -> (..., output_dim) rows of `weight`."""

    porter_layout = "source"

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None, sparse_grad=False, **kwargs):
        super().__init__(**_gluon_keras_kwargs({**kwargs, "dtype": dtype}))
        self.input_dim, self.output_dim, self.sparse_grad = int(input_dim), int(output_dim), sparse_grad
        self.weight = self.add_weight(shape=(self.input_dim, self.output_dim), name="weight",
                                      initializer=_gluon_xavier(None, self.input_dim, self.output_dim))
        self.finish_init()

    def call(self, x):
        ids = tf.convert_to_tensor(x)
        if not ids.dtype.is_integer:
            ids = tf.cast(ids, tf.int32)  # mxnet truncates float indices toward zero
        ids = tf.clip_by_value(tf.cast(ids, tf.int32), 0, self.input_dim - 1)
        return tf.cast(tf.gather(self.weight, ids), self.compute_dtype)

    def torch_state(self, prefix=""):
        return [StateEntry(prefix + "weight", self.weight)]

    def collect_params(self, select=None):
        """Its weight by state name, for a layer that shares it (`params=embed.collect_params()`)."""
        return {"weight": self.weight}

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim, "output_dim": self.output_dim,
                "sparse_grad": self.sparse_grad}
