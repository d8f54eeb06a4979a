"""Small helpers the translated code calls: sizes in torch's dim order, stubs, parameter initialisers."""

import copy
import math

import keras
import numpy as np
import tensorflow as tf

from porter.runtime.advanced_index import advanced_index
from porter.runtime.base import TorchLayer

from porter.runtime.init_gain import calculate_gain


def dim_size(x, axis):
    """Size of `axis` of `x`: a Python int when static, else a scalar tensor (batch under tracing)."""
    size = x.shape[axis]
    return size if size is not None else tf.shape(x)[axis]


def torch_numel(x):
    """torch's x.numel(): a Python int when every size is static (it slices and sizes under XLA), else a scalar
    tensor."""
    if None not in tuple(x.shape):
        return int(np.prod(tuple(x.shape), dtype=np.int64))
    return tf.size(x)


def torch_size(x, channels_last=False):
    """torch's x.size() as a tuple (static ints where known), in torch's dim order."""
    sizes = [dim_size(x, axis) for axis in range(len(x.shape))]
    if channels_last and len(sizes) > 2:
        sizes = [sizes[0], sizes[-1]] + sizes[1:-1]
    return tuple(sizes)


def not_supported(message):
    """Stands for a construct porter could not translate; raises when that code runs."""
    raise NotImplementedError(message)


class NotTranslatedBase:
    """Stands for a framework class porter has no port of where code carried over as written derives from it
    (GluonNLP's `class WeightDropParameter(gluon.Parameter)`): the subclass is defined, building one raises."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} derives from a framework class porter does not translate "
                                  f"({type(self).__mro__[1].__name__} stands for it): port it by hand")


class UnsupportedModule(TorchLayer):
    """Stands for a torch module porter has no rule for: constructible, raises NotImplementedError when called."""

    def __init__(self, message, **kwargs):
        super().__init__(**kwargs)
        self.message = message
        self.finish_init()

    def call(self, *args, **kwargs):
        raise NotImplementedError(self.message)

    def get_config(self):
        return {**super().get_config(), "message": self.message}


def index_select_first(x, index):
    """x[index] for an integer tensor index (gather on the first axis)."""
    index = tf.convert_to_tensor(index)
    if index.dtype == tf.bool:
        raise NotImplementedError("boolean mask indexing has a data-dependent size (not XLA-compilable)")
    return tf.gather(x, index)


def unstack_first(x):
    """Iterating over a tensor: the slices along its first axis."""
    return tf.unstack(x, axis=0)


def _fans(shape):
    shape = tuple(shape)
    if len(shape) < 2:
        return shape[0] if shape else 1, shape[0] if shape else 1
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def torch_shape_of(tensor):
    """The shape of `tensor` in torch's order: a convolution's kernel, stored (k..., I/g, O), says torch's (O, I/g,
    k...) in its `porter_torch_view` (runtime/conv.py); any other tensor is stored as torch holds it."""
    view = getattr(tensor, "porter_torch_view", None)
    return tuple(view[0]) if view is not None else tuple(tensor.shape)


def _init_assign(tensor, values, torch_layout=True):
    """Fill `tensor` with `values(shape)`, drawn in torch's `shape` (fans, eye and orthogonal rows are torch's)
    and stored as the port holds the tensor; `torch_layout=False`: `values` computes in the stored layout. A table
    built without its rows (TableBuild: None or a RowlessTable) is left alone: the run starts from the host copy's
    rows, and drawing a table-sized tensor here is what that build avoids."""
    if tensor is None or getattr(tensor, "served_elsewhere", False):
        return tensor
    view = getattr(tensor, "porter_torch_view", None) if torch_layout else None
    drawn = values(tuple(view[0]) if view is not None else tuple(tensor.shape))
    if view is not None:
        drawn = view[1](np.asarray(drawn))
    if not hasattr(tensor, "assign"):  # a tensor, not a variable (a weight-normed conv's computed `weight`): the
        return tf.cast(drawn, tensor.dtype)  # values drawn, for a caller that rebinds it (torch filled a temporary)
    tensor.assign(tf.cast(drawn, tensor.dtype))
    return tensor


def init_normal(tensor, mean=0.0, std=1.0, generator=None):
    return _init_assign(tensor, lambda shape: tf.random.normal(shape, mean, std))


def init_trunc_normal(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """torch.nn.init.trunc_normal_, torch's way: uniform values between the normal CDF at a and at b, through the
    inverse CDF (no mass piles up at the bounds, as clipping normal draws would leave)."""
    low = (1.0 + math.erf((a - mean) / std / math.sqrt(2.0))) / 2.0
    high = (1.0 + math.erf((b - mean) / std / math.sqrt(2.0))) / 2.0

    def values(shape):
        drawn = tf.math.erfinv(tf.random.uniform(shape, 2 * low - 1, 2 * high - 1)) * (std * math.sqrt(2.0))
        return tf.clip_by_value(drawn + mean, a, b)

    return _init_assign(tensor, values)


def init_trunc_normal_tf(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """timm.layers.trunc_normal_tf_: a standard normal truncated to [a, b], then scaled by std and shifted by mean
    (the bounds apply before scaling, as in TensorFlow's initialisers)."""
    init_trunc_normal(tensor, 0.0, 1.0, a, b)
    return _init_assign(tensor, lambda shape: tensor * std + mean, torch_layout=False)


def init_variance_scaling(tensor, scale=1.0, mode="fan_in", distribution="normal"):
    """timm.layers.variance_scaling_ (TensorFlow's VarianceScaling on torch's fans); lecun_normal_ is its fan_in
    truncated-normal case."""
    if tensor is None or getattr(tensor, "served_elsewhere", False):
        return tensor  # a table built without its rows (TableBuild)
    fan_in, fan_out = _fans(torch_shape_of(tensor))
    denom = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
    variance = scale / denom
    if distribution == "truncated_normal":
        return init_trunc_normal_tf(tensor, std=math.sqrt(variance) / 0.87962566103423978)  # std of N(0,1) on [-2, 2]
    if distribution == "normal":
        return _init_assign(tensor, lambda shape: tf.random.normal(shape, 0.0, math.sqrt(variance)))
    if distribution == "uniform":
        bound = math.sqrt(3 * variance)
        return _init_assign(tensor, lambda shape: tf.random.uniform(shape, -bound, bound))
    raise ValueError(f"invalid distribution {distribution}")


def init_lecun_normal(tensor):
    """timm.layers.lecun_normal_: variance_scaling_(tensor, mode="fan_in", distribution="truncated_normal")."""
    return init_variance_scaling(tensor, 1.0, "fan_in", "truncated_normal")


def init_uniform(tensor, a=0.0, b=1.0, generator=None):
    return _init_assign(tensor, lambda shape: tf.random.uniform(shape, a, b))


def init_constant(tensor, val):
    return _init_assign(tensor, lambda shape: tf.fill(shape, float(val)))


def init_zeros(tensor):
    return _init_assign(tensor, lambda shape: tf.zeros(shape))


def init_ones(tensor):
    return _init_assign(tensor, lambda shape: tf.ones(shape))


def init_eye(tensor):
    return _init_assign(tensor, lambda shape: tf.eye(*shape))


def _xavier_bound(tensor, gain):
    fan_in, fan_out = _fans(torch_shape_of(tensor))
    return gain * math.sqrt(6.0 / (fan_in + fan_out))


def init_xavier_uniform(tensor, gain=1.0, generator=None):
    return _init_assign(tensor, lambda shape: tf.random.uniform(shape, -_xavier_bound(tensor, gain),
                                                          _xavier_bound(tensor, gain)))


def init_xavier_normal(tensor, gain=1.0, generator=None):
    return _init_assign(tensor, lambda shape: tf.random.normal(shape, 0.0,
                                                         _xavier_bound(tensor, gain) / math.sqrt(3.0)))


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan_in, fan_out = _fans(torch_shape_of(tensor))
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(max(fan, 1))  # torch: tanh 5/3, selu 3/4, ...


def init_kaiming_uniform(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    return _init_assign(tensor, lambda shape: tf.random.uniform(
        shape, -math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity),
        math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)))


def init_kaiming_normal(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    return _init_assign(tensor, lambda shape: tf.random.normal(shape, 0.0,
                                                         _kaiming_std(tensor, a, mode, nonlinearity)))


def init_orthogonal(tensor, gain=1.0, generator=None):
    def values(shape):  # torch's rows: the first axis against all the others flattened
        rows = shape[0] if shape else 1
        return tf.reshape(keras.initializers.Orthogonal(gain)((rows, int(np.prod(shape)) // max(rows, 1))), shape)

    return _init_assign(tensor, values)


def bool_as_int(x):
    """A tensor compared with a number (`mask == 0`): a bool one as int32 (torch counts True as 1; TensorFlow will
    not compare a bool with a number), any other as it is."""
    x = tf.convert_to_tensor(x)
    return tf.cast(x, tf.int32) if x.dtype == tf.bool else x


def clone_layer(value, memo=None):
    """copy.deepcopy of ported layers (torch's `clones(module, N)`: the Annotated Transformer's): a layer is built
    again from its config, the layers among its constructor's arguments cloned in turn (as deepcopy copies them;
    the same layer handed twice is cloned once), and its weights copied where both are built alike (torch's clones
    start equal); lists, tuples and dicts are copied item by item, anything else by copy.deepcopy (Keras would pickle
    a layer through its saving library, which cannot find a port's classes)."""
    memo = {} if memo is None else memo
    if type(value) in (list, tuple):
        return type(value)(clone_layer(item, memo) for item in value)
    if type(value) is dict:
        return {key: clone_layer(item, memo) for key, item in value.items()}
    if not isinstance(value, keras.layers.Layer):
        return copy.deepcopy(value, memo)
    if id(value) in memo:  # (layers only: the model keeps them alive, so their ids stay theirs)
        return memo[id(value)]
    config = {k: v for k, v in value.get_config().items() if k != "name"}
    made = type(value).from_config({k: clone_layer(v, memo) for k, v in config.items()})
    if value.built and made.built and len(value.weights) == len(made.weights) and all(
            tuple(a.shape) == tuple(b.shape) for a, b in zip(value.weights, made.weights)):
        for source, target in zip(value.weights, made.weights):
            target.assign(source)
    memo[id(value)] = made
    return made


def _masked_setitem(x, mask, value):
    """`x[mask] = value`: the mask covers x's leading dims (torch's rule); a value of one element per True position
    (in order) is scattered there, anything broadcastable to x is selected where the mask holds."""
    value = tf.cast(value, x.dtype)
    lead = mask.shape.rank
    if value.shape.rank is not None and value.shape.rank == x.shape.rank - lead + 1 and \
            (value.shape.rank > 0 and value.shape[0] != 1):
        return tf.tensor_scatter_nd_update(x, tf.where(mask), value)
    wide = tf.reshape(mask, tf.concat([tf.shape(mask), tf.ones([x.shape.rank - lead], tf.int32)], 0))
    return tf.where(wide, value, x)


def setitem(x, index, value):
    """torch's `x[index] = value` on an immutable tensor: a scatter over statically known positions; by a boolean
    mask, a `where` (a number or a broadcastable value) or a scatter of the values taken in order."""
    x = tf.convert_to_tensor(x)
    mask = index[0] if isinstance(index, tuple) and len(index) == 1 else index
    if isinstance(mask, (tf.Tensor, tf.Variable, np.ndarray)) and mask.dtype in (tf.bool, np.bool_):
        return _masked_setitem(x, tf.convert_to_tensor(mask), value)
    if any(isinstance(item, (tf.Tensor, tf.Variable)) for item in (index if isinstance(index, tuple) else (index,))):
        # positions picked at run time (Informer's `context[torch.arange(B)[:, None], index, :] = ...` with a topk
        # index): the flat positions indexed as x would be, then one scatter (traceable; no host-side numpy)
        positions = advanced_index(tf.reshape(tf.range(tf.size(x, out_type=tf.int64)), tf.shape(x)), index)
        value = tf.broadcast_to(tf.cast(value, x.dtype), tf.shape(positions))
        flat = tf.tensor_scatter_nd_update(tf.reshape(x, [-1]), tf.reshape(positions, [-1, 1]),
                                           tf.reshape(value, [-1]))
        return tf.reshape(flat, tf.shape(x))
    if None in tuple(x.shape):
        raise NotImplementedError("item assignment needs a tensor whose shape is static")
    positions = np.arange(int(np.prod(x.shape)), dtype=np.int64).reshape(tuple(x.shape))[index]
    positions = np.asarray(positions).reshape(-1, 1)
    value = tf.broadcast_to(tf.cast(value, x.dtype), np.asarray(
        np.arange(int(np.prod(x.shape))).reshape(tuple(x.shape))[index]).shape)
    flat = tf.tensor_scatter_nd_update(tf.reshape(x, [-1]), positions, tf.reshape(value, [-1]))
    return tf.reshape(flat, x.shape)
