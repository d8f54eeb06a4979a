"""torch.nn.Embedding / EmbeddingBag, F.embedding / embedding_bag / one_hot (layout "source").

The weight is torch's (num_embeddings, embedding_dim) table, so it can be tied to a Linear weight. The forward is
a gather. padding_idx: as in torch the row is zeroed at initialisation only; the forward returns the row as it is,
and its gradient is kept at zero by routing the padding positions through tf.stop_gradient.
max_norm: as torch, the rows a lookup references are renormalised in place (the variable is assigned) before the
gather; a table given as a computed tensor is renormalised for that lookup only.

Each layer has a `lookup_feed` (LookupFeed): a training step that serves the table through the TPU embedding API
switches it to "capture" (the layer records the ids the model's own code passes it, which the step enqueues) or to
"feed" (the layer returns the activations the API dequeued instead of gathering from its weight; the loss' gradient
w.r.t. them is what the API's apply_gradients takes). With the feed off, nothing changes. F.embedding /
F.embedding_bag calls have the same feed, kept on the parameter they look up (`functional_feed`).

A model built inside `TableBuild(served, served_parameters)` gives the layers whose construction index is in
`served` no weight, and makes the nn.Parameter values at the positions in `served_parameters` RowlessTables (looked
up by F.embedding through their feed only): their rows live in the TPU embedding API's tables (and in a copy of the
model on the host), not on every core.
"""

import keras
import numpy as np
import tensorflow as tf

from porter.runtime.base import StateEntry, TorchLayer
from porter.runtime.module import ParameterBuild


def _embedding_padding_idx(padding_idx, num_embeddings):
    """torch's padding_idx normalisation: negative counts from the end; must index the table."""
    if padding_idx is None:
        return None
    padding_idx = int(padding_idx)
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise ValueError(f"padding_idx {padding_idx} must be within num_embeddings ({num_embeddings})")
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


def _renormalised(weight, ids, max_norm, norm_type):
    """torch.embedding_renorm_: `weight` with the rows `ids` reference scaled to a `norm_type`-norm of at most
    `max_norm` (by max_norm / (norm + 1e-7)); a variable is assigned in place, as torch does, outside autograd."""
    if max_norm is None:
        return weight
    flat = tf.reshape(tf.cast(ids, tf.int64), [-1, 1])
    table = tf.stop_gradient(tf.convert_to_tensor(weight))
    rows = tf.gather_nd(table, flat)
    norms = tf.norm(rows, ord=float(norm_type), axis=-1, keepdims=True)
    scale = tf.where(norms > max_norm, max_norm / (norms + 1e-7), tf.ones_like(norms))
    renormed = tf.tensor_scatter_nd_update(table, flat, rows * tf.cast(scale, rows.dtype))  # repeats: same rows
    if not isinstance(weight, (keras.Variable, tf.Variable)):
        return renormed
    weight.assign(renormed)
    return weight


def _embedding_ids(input):
    ids = input if isinstance(input, (tf.Tensor, tf.Variable)) else tf.convert_to_tensor(input)
    if not ids.dtype.is_integer:
        raise TypeError(f"embedding indices must be integers, got {ids.dtype.name}")
    return ids


def _embedding_scale_grad(values, ids, num_embeddings):
    """Identity on `values` (gathered rows) whose gradient is divided by each index's count in `ids` (torch's
    scale_grad_by_freq)."""
    flat = tf.reshape(ids, [-1])
    counts = tf.math.unsorted_segment_sum(tf.ones_like(flat, tf.float32), flat, num_embeddings)
    scale = tf.cast(tf.expand_dims(1.0 / tf.gather(counts, ids), -1), values.dtype)

    @tf.custom_gradient
    def scaled(t):
        return tf.identity(t), lambda dy: dy * scale

    return scaled(values)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """F.embedding: rows of `weight` (num_embeddings, embedding_dim) at the integer indices `input` (max_norm:
    those rows renormalised in place first); a weight whose lookup feed is on (functional_feed) gives the captured
    or fed result instead."""
    feed = functional_feed(weight, "embedding", padding_idx=padding_idx, sparse=sparse,
                           scale_grad_by_freq=scale_grad_by_freq, max_norm=max_norm)
    if feed is not None and feed.mode is not None:
        padding_idx = _embedding_padding_idx(padding_idx, weight.shape[0])
        return _fed_embedding(feed, input, weight.shape[1], padding_idx, weight.dtype)
    return _embedding_rows(input, TableBuild.rows_of(weight), padding_idx, scale_grad_by_freq, max_norm, norm_type)


def _embedding_rows(input, weight, padding_idx=None, scale_grad_by_freq=False, max_norm=None, norm_type=2.0):
    """The gather of F.embedding (no feed)."""
    ids = _embedding_ids(input)
    weight = _renormalised(weight, ids, max_norm, norm_type)
    num_embeddings = weight.shape[0]
    padding_idx = _embedding_padding_idx(padding_idx, num_embeddings)
    values = tf.gather(weight, ids)
    if padding_idx is not None:
        values = _stop_padding_gradient(values, ids, padding_idx)
    if scale_grad_by_freq:
        values = _embedding_scale_grad(values, ids, num_embeddings)
    return values


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """F.embedding_bag: sums / means / maxima of embedding rows per bag.

    2-D input (B, L): each row is a bag (offsets must be None). 1-D input with 1-D `offsets` (static length):
    bag i is input[offsets[i]:offsets[i + 1]] (a segment reduction with a static number of bags).
    padding_idx entries are left out (also from the mean's count); empty bags give zeros. A weight whose lookup
    feed is on (functional_feed) gives the captured or fed result instead.
    """
    feed = functional_feed(weight, "embedding_bag", padding_idx=padding_idx, sparse=sparse, mode=mode,
                           scale_grad_by_freq=scale_grad_by_freq, include_last_offset=include_last_offset,
                           per_sample_weights=per_sample_weights is not None, max_norm=max_norm)
    if feed is not None and feed.mode is not None:
        return _fed_embedding_bag(feed, input, offsets, per_sample_weights, include_last_offset, weight.shape[1],
                                  weight.dtype)
    return _embedding_bag_rows_of(input, TableBuild.rows_of(weight), offsets, scale_grad_by_freq, mode,
                                  per_sample_weights, include_last_offset, padding_idx, max_norm, norm_type)


def _embedding_bag_rows_of(input, weight, offsets=None, scale_grad_by_freq=False, mode="mean",
                           per_sample_weights=None, include_last_offset=False, padding_idx=None, max_norm=None,
                           norm_type=2.0):
    """The reduction of F.embedding_bag (no feed; max_norm: the referenced rows renormalised in place first)."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}')")
    ids = _embedding_ids(input)
    num_embeddings = weight.shape[0]
    padding_idx = _embedding_padding_idx(padding_idx, num_embeddings)
    weight = _renormalised(weight, ids, max_norm, norm_type)
    values = tf.gather(weight, ids)
    if scale_grad_by_freq:
        values = _embedding_scale_grad(values, ids, num_embeddings)
    if per_sample_weights is not None:
        values = values * tf.expand_dims(tf.cast(per_sample_weights, values.dtype), -1)
    valid = None if padding_idx is None else tf.not_equal(ids, padding_idx)
    if len(ids.shape) == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: if input is 2D, then offsets has to be None")
        return _embedding_bag_rows(values, valid, mode)
    if len(ids.shape) != 1 or offsets is None:
        raise ValueError(f"embedding_bag: input has to be 1D with offsets or 2D, got {len(ids.shape)}D "
                         f"{'without' if offsets is None else 'with'} offsets")
    return _embedding_bag_segments(values, valid, offsets, mode, include_last_offset)


def _embedding_bag_rows(values, valid, mode):
    """Bags are the rows of a 2-D index tensor: values (B, L, D), valid (B, L) or None."""
    length = values.shape[1] if values.shape[1] is not None else tf.shape(values)[1]
    if valid is None:
        count = tf.cast(length, values.dtype)
    else:
        keep = tf.expand_dims(valid, -1)
        count = tf.reduce_sum(tf.cast(keep, values.dtype), axis=1)
    if mode == "max":
        if valid is not None:
            values = tf.where(keep, values, tf.fill(tf.shape(values), tf.constant(values.dtype.min, values.dtype)))
        result = tf.reduce_max(values, axis=1)
        return result if valid is None else tf.where(count > 0, result, tf.zeros_like(result))
    if valid is not None:
        values = tf.where(keep, values, tf.zeros_like(values))
    total = tf.reduce_sum(values, axis=1)
    if mode == "sum":
        return total
    return total / tf.maximum(count, 1) if valid is not None else total / count


def _embedding_bag_segments(values, valid, offsets, mode, include_last_offset):
    """Bags given by offsets into a 1-D index tensor: values (L, D); a static number of bags."""
    offsets = tf.cast(offsets if isinstance(offsets, (tf.Tensor, tf.Variable)) else tf.convert_to_tensor(offsets),
                      tf.int32)
    if len(offsets.shape) != 1 or offsets.shape[0] is None:
        raise ValueError("embedding_bag: offsets must be 1-D with a static length (the number of bags)")
    bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    positions = tf.range(tf.shape(values)[0], dtype=tf.int32)
    starts = offsets[:bags]
    segment = tf.reduce_sum(tf.cast(tf.expand_dims(positions, 1) >= tf.expand_dims(starts, 0), tf.int32), 1) - 1
    dropped = tf.fill(tf.shape(segment), -1)  # negative segment ids are left out of every bag
    if include_last_offset:
        segment = tf.where(positions >= offsets[bags], dropped, segment)
    if valid is not None:
        segment = tf.where(valid, segment, dropped)
    count = tf.math.unsorted_segment_sum(tf.ones_like(segment, values.dtype), segment, bags)
    count = tf.expand_dims(count, -1)
    if mode == "max":
        result = tf.math.unsorted_segment_max(values, segment, bags)
        return tf.where(count > 0, result, tf.zeros_like(result))
    total = tf.math.unsorted_segment_sum(values, segment, bags)
    return total if mode == "sum" else total / tf.maximum(count, 1)


class LookupFeed:
    """A table's substitution slot (see the module docstring). The model keeps calling the layer with its ids.

    mode None: the layer gathers from its own weight (the normal path).
    mode "capture": each call appends its ids to `calls` (a RaggedTensor of bags for an EmbeddingBag given 1-D ids
    and offsets) and returns zeros of the lookup's shape without reading the table: what else the model computes is
    unused by a capture run, so the traced graph drops it.
    mode "feed": each call returns the next of `activations` (in call order) instead of gathering.
    `unsupported`: why a captured call cannot be fed (the table then stays dense), else None.
    """

    def __init__(self):
        self.mode, self.calls, self.activations, self.unsupported = None, [], [], None
        self.lookups = []  # functional lookups: (kind, arguments) of each distinct call (functional_feed)

    def substitute(self, feature, static_shape, shape, dtype):
        """The captured or fed result of one lookup of shape `shape` (its static part `static_shape`), or None on
        the normal path."""
        if self.mode is None:
            return None
        if self.mode == "capture":
            self.calls.append(feature)
            return tf.zeros(shape, dtype)
        if not self.activations:
            raise ValueError("embedding feed: the layer is called more often than activations were fed")
        activations = tf.convert_to_tensor(self.activations.pop(0))
        if not activations.shape.is_compatible_with(static_shape):
            raise ValueError(f"embedding feed: activations of shape {activations.shape} do not fit the lookup's "
                             f"{static_shape}")
        return tf.cast(activations, dtype)


def functional_feed(weight, kind, **arguments):
    """The lookup feed of a parameter that F.embedding / F.embedding_bag (`kind`) looks up, made at its first
    lookup and kept on the variable (None for a weight that is no variable: a computed table is never served).
    Each distinct call's (kind, arguments) goes into `feed.lookups`: train_support serves the parameter through the
    TPU embedding API only when every call looks it up alike, in a way the API reproduces."""
    if not isinstance(weight, (keras.Variable, tf.Variable, RowlessTable)):
        return None
    feed = getattr(weight, "lookup_feed", None)
    if feed is None:
        feed = LookupFeed()
        weight.lookup_feed = feed
    signature = (kind, tuple(sorted((name, _plain(value)) for name, value in arguments.items())))
    if signature not in feed.lookups:
        feed.lookups.append(signature)
    return feed


def _plain(value):
    """A lookup argument as a Python value that compares (a tensor's is its repr, which no other call shares)."""
    if isinstance(value, np.generic):
        return value.item()
    return value if value is None or isinstance(value, (bool, int, float, str)) else repr(value)


def _fed_embedding(feed, input, embedding_dim, padding_idx, dtype):
    """An Embedding lookup's captured or fed result (feed on), no gradient at padding positions."""
    ids = _embedding_ids(input)
    shape = tf.concat([tf.shape(ids), [embedding_dim]], 0)
    fed = feed.substitute(ids, ids.shape.concatenate([embedding_dim]), shape, dtype)
    return fed if padding_idx is None else _stop_padding_gradient(fed, ids, padding_idx)


def _fed_embedding_bag(feed, input, offsets, per_sample_weights, include_last_offset, embedding_dim, dtype):
    """An EmbeddingBag lookup's captured or fed result (feed on); its padding entries leave the bags in the fed
    ids (train_support)."""
    _no_feed_weights(feed, per_sample_weights)
    feature, static_bags, bags = _bag_feature(_embedding_ids(input), offsets, include_last_offset)
    return feed.substitute(feature, tf.TensorShape([static_bags, embedding_dim]), tf.stack([bags, embedding_dim]),
                           dtype)


def _no_feed_weights(feed, per_sample_weights):
    """per_sample_weights are not fed: a capture notes it (the table stays dense), a feed refuses it."""
    if per_sample_weights is None:
        return
    why = "per_sample_weights are not fed through the TPU embedding API"
    if feed.mode != "capture":
        raise NotImplementedError(f"EmbeddingBag: {why}; keep this table dense")
    feed.unsupported = why


def _bag_feature(ids, offsets, include_last_offset):
    """(what a capture records for one EmbeddingBag call, static number of bags, number of bags): the 2-D ids,
    or the bags of 1-D ids given by `offsets` as a RaggedTensor."""
    if len(ids.shape) == 2 and offsets is None:
        return ids, ids.shape[0], tf.shape(ids)[0]
    if len(ids.shape) != 1 or offsets is None:
        raise ValueError("embedding_bag: input has to be 1D with offsets or 2D")
    offsets = tf.cast(tf.convert_to_tensor(offsets), tf.int64)
    if len(offsets.shape) != 1 or offsets.shape[0] is None:
        raise ValueError("embedding_bag: offsets must be 1-D with a static length (the number of bags)")
    bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    end = offsets[bags] if include_last_offset else tf.shape(ids, out_type=tf.int64)[0]
    splits = tf.concat([offsets[:bags], [end]], 0)
    return tf.RaggedTensor.from_row_splits(ids[:end], splits), bags, bags


def _stop_padding_gradient(values, ids, padding_idx):
    """The gathered (or fed) rows with no gradient at padding positions: torch keeps that row's gradient at zero."""
    return tf.where(tf.expand_dims(tf.equal(ids, tf.cast(padding_idx, ids.dtype)), -1), tf.stop_gradient(values),
                    values)


def one_hot(tensor, num_classes=-1):
    """F.one_hot: int64 one-hot vectors on a new last axis; num_classes must be given (static output shape)."""
    if not isinstance(num_classes, (int, np.integer)) or isinstance(num_classes, bool) or num_classes < 0:
        raise ValueError(f"one_hot: num_classes must be a literal non-negative int (got {num_classes!r}); torch's "
                         "num_classes=-1 infers max(tensor) + 1 from the data, which gives a data-dependent shape "
                         "that XLA cannot compile. Pass num_classes explicitly in the source model")
    indices = tensor if isinstance(tensor, (tf.Tensor, tf.Variable)) else tf.convert_to_tensor(tensor)
    return tf.one_hot(indices, int(num_classes), dtype=tf.int64)


def _embedding_initializer(weight, padding_idx):
    """torch's init: N(0, 1) with the padding row zeroed, or the given `_weight` as it is."""

    def initialize(shape, dtype=None):
        if weight is not None:
            return tf.cast(tf.reshape(tf.convert_to_tensor(np.asarray(weight)), shape), dtype)
        values = keras.random.normal(shape, dtype=dtype)
        if padding_idx is None:
            return values
        return tf.where(tf.expand_dims(tf.range(shape[0]) == padding_idx, -1), tf.zeros_like(values), values)

    return initialize


class RowlessTable:
    """An nn.Parameter that F.embedding / F.embedding_bag look up, made by a TableBuild without its rows: the TPU
    embedding API (and the host copy of the model) hold them. It has the parameter's shape and dtype and the lookup
    feed, no variable: the model's weights, state and optimizer leave it out; torch's init functions and in-place
    fills leave it alone (`served_elsewhere`), and a lookup outside a feed is refused (TableBuild.rows_of)."""

    served_elsewhere = True
    trainable = True

    def __init__(self, shape, dtype, name):
        self.shape, self.dtype, self.name, self.path = tuple(int(d) for d in shape), dtype, name, name
        self.lookup_feed = LookupFeed()

    def __repr__(self):
        return f"RowlessTable({self.name}, {self.shape[0]}x{self.shape[1]})"


class TableBuild:
    """`with TableBuild(served, served_parameters) as build:` the Embedding / EmbeddingBag layers constructed inside
    (a model built there) are listed in `build.layers`, and its modules' nn.Parameter values in `build.parameters`,
    each in construction order; the layers whose index is in `served` get no weight variable (`weight` None, no
    state entry), the parameters whose index is in `served_parameters` are RowlessTables: the TPU embedding API
    holds their rows, so the model built in a TPU strategy's scope does not allocate a copy of those tables on every
    core. A host copy of the model, built the same way without them, names the tables (its `build.layers` and
    `build.parameters`) and carries their trained rows back for export.

    The model's own code constructs the layers, so the build in progress is this thread's (ParameterBuild)."""

    def __init__(self, served=(), served_parameters=()):
        self.served, self.served_parameters = frozenset(served), frozenset(served_parameters)
        self.layers, self.parameters, self._outer = [], [], None

    def __enter__(self):
        self._outer = ParameterBuild.current()
        ParameterBuild.active.build = self
        return self

    def __exit__(self, *exc_info):
        ParameterBuild.active.build = self._outer

    def parameter(self, shape, dtype, variable):
        """A module's nn.Parameter of `shape`: a RowlessTable when its position is served, else `variable()`."""
        index = len(self.parameters)
        made = RowlessTable(shape, dtype, f"parameter_{index}") if index in self.served_parameters else variable()
        self.parameters.append(made)
        return made

    @staticmethod
    def served_elsewhere(layer):
        """Whether `layer` (an Embedding / EmbeddingBag being constructed) is built without its weight."""
        build = ParameterBuild.current()
        if not isinstance(build, TableBuild):
            return False
        build.layers.append(layer)
        return len(build.layers) - 1 in build.served

    @staticmethod
    def rows_of(weight):
        """The rows F.embedding / F.embedding_bag gather from: `weight`, or a clear error for a parameter made
        without them (a RowlessTable outside its lookup feed)."""
        if getattr(weight, "served_elsewhere", False):
            raise ValueError(f"{weight!r}: this table is served by the TPU embedding API (built without its rows); "
                             f"it is looked up through its lookup feed only")
        return weight


def _own_rows(layer):
    """The layer's weight, or a clear error for a table built without one (TableBuild) outside a lookup feed."""
    if layer.weight is None:
        raise ValueError(f"{layer.name}: this table is served by the TPU embedding API (built without its rows); "
                         f"it is looked up through its lookup feed only")
    return layer.weight


class Embedding(TorchLayer):
    """torch.nn.Embedding: weight (num_embeddings, embedding_dim) named 'weight'; forward is a gather."""

    porter_layout = "source"

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _embedding_padding_idx(padding_idx, num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse, self._freeze = scale_grad_by_freq, sparse, _freeze
        self.weight = None if TableBuild.served_elsewhere(self) else self.add_weight(
            shape=(num_embeddings, embedding_dim), name="weight", trainable=not _freeze,
            initializer=_embedding_initializer(_weight, self.padding_idx))
        self.lookup_feed = LookupFeed()
        self.finish_init()

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False, **kwargs):
        """torch.nn.Embedding.from_pretrained: the table as given (padding row not zeroed); frozen by default."""
        rows, dim = tuple(np.shape(embeddings))
        return cls(rows, dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze, **kwargs)

    def call(self, input):
        if self.lookup_feed.mode is not None:
            return _fed_embedding(self.lookup_feed, input, self.embedding_dim, self.padding_idx, self.compute_dtype)
        values = _embedding_rows(input, _own_rows(self), self.padding_idx, self.scale_grad_by_freq, self.max_norm,
                                 self.norm_type)
        return tf.cast(values, self.compute_dtype)

    def torch_state(self, prefix=""):
        return [] if self.weight is None else [StateEntry(prefix + "weight", self.weight)]

    def get_config(self):
        return {**super().get_config(), "num_embeddings": self.num_embeddings, "embedding_dim": self.embedding_dim,
                "padding_idx": self.padding_idx, "max_norm": self.max_norm, "norm_type": self.norm_type,
                "scale_grad_by_freq": self.scale_grad_by_freq, "sparse": self.sparse, "_freeze": self._freeze}


class EmbeddingBag(TorchLayer):
    """torch.nn.EmbeddingBag: call(input, offsets=None, per_sample_weights=None) -> (bags, embedding_dim)."""

    porter_layout = "source"

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None, **kwargs):
        _freeze = kwargs.pop("_freeze", False)
        super().__init__(**kwargs)
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode has to be one of sum, mean or max, got {mode!r}")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        self.padding_idx = _embedding_padding_idx(padding_idx, num_embeddings)
        self._freeze = _freeze
        self.weight = None if TableBuild.served_elsewhere(self) else self.add_weight(
            shape=(num_embeddings, embedding_dim), name="weight", trainable=not _freeze,
            initializer=_embedding_initializer(_weight, self.padding_idx))
        self.lookup_feed = LookupFeed()
        self.finish_init()

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None, **kwargs):
        """torch.nn.EmbeddingBag.from_pretrained: the table as given; frozen by default."""
        rows, dim = tuple(np.shape(embeddings))
        return cls(rows, dim, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings, include_last_offset,
                   padding_idx, _freeze=freeze, **kwargs)

    def call(self, input, offsets=None, per_sample_weights=None):
        if self.lookup_feed.mode is not None:
            return _fed_embedding_bag(self.lookup_feed, input, offsets, per_sample_weights, self.include_last_offset,
                                      self.embedding_dim, self.compute_dtype)
        values = _embedding_bag_rows_of(input, _own_rows(self), offsets, self.scale_grad_by_freq, self.mode,
                                        per_sample_weights, self.include_last_offset, self.padding_idx,
                                        self.max_norm, self.norm_type)
        return tf.cast(values, self.compute_dtype)

    def torch_state(self, prefix=""):
        return [] if self.weight is None else [StateEntry(prefix + "weight", self.weight)]

    def get_config(self):
        return {**super().get_config(), "num_embeddings": self.num_embeddings, "embedding_dim": self.embedding_dim,
                "max_norm": self.max_norm, "norm_type": self.norm_type, "scale_grad_by_freq": self.scale_grad_by_freq,
                "mode": self.mode, "sparse": self.sparse, "include_last_offset": self.include_last_offset,
                "padding_idx": self.padding_idx, "_freeze": self._freeze}
