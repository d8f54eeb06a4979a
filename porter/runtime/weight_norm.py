"""torch.nn.utils weight normalisation on porter's runtime layers: `weight_norm` (legacy: parameters `weight_g`,
`weight_v`) and `parametrizations.weight_norm` (state_dict keys `parametrizations.weight.original0` (g) and
`original1` (v)), with `remove_weight_norm` / `parametrize.remove_parametrizations`.

As in torch, the layer's class is swapped for a subclass (`ParametrizedConv1d`) whose `weight` is a property:
weight = g * v / ||v||, the norm over every torch dim but `dim` (dim None or -1: the whole tensor), computed from the
trainable variables g and v at each call, so training updates g and v as torch does.

g and v are kept in the layer's own (Keras) weight layout when torch's `dim` is one axis there (Conv kernels stored
HWIO, Linear): the norm then runs over the other axes and nothing is transposed per call. Otherwise (a grouped
transposed convolution, whose stored kernel mixes torch's dim 0 into two axes) v is kept in torch's order and the
kernel is gathered from it per call.
"""

import functools

import numpy as np
import tensorflow as tf

from porter.runtime.base import StateEntry
from porter.runtime.helpers import torch_shape_of

WEIGHT_NORM_KEYS = {"legacy": ("{name}_g", "{name}_v"),
                    "parametrizations": ("parametrizations.{name}.original0", "parametrizations.{name}.original1")}


def _weight_norm_torch_shape(layer, variable, to_keras):
    """The torch shape of the parameter a layer stores as `variable` (transformed by `to_keras` on load): a
    convolution's kernel, stored (k..., I/g, O), carries torch's shape (`torch_shape_of`); any other parameter is
    stored as torch holds it."""
    if to_keras is None:
        return tuple(variable.shape)
    if getattr(variable, "porter_torch_view", None) is None:
        raise ValueError(f"weight_norm: porter does not know the torch shape of {type(layer).__name__}'s parameter")
    return torch_shape_of(variable)


class WeightNormSpec:
    """Where g and v live and how the layer's stored weight is made from them."""

    def __init__(self, name, dim, api, torch_shape, keras_shape, index, axis):
        self.name, self.dim, self.api = name, dim, api
        self.torch_shape, self.keras_shape = torch_shape, keras_shape
        self.index = index  # for each stored-weight element, its flat index in torch's order
        self.axis = axis  # the stored axis holding torch's `dim` (-1: whole-tensor norm), None: kept in torch order

    def keys(self, prefix):
        g_key, v_key = WEIGHT_NORM_KEYS[self.api]
        return prefix + g_key.format(name=self.name), prefix + v_key.format(name=self.name)

    def norm_axes(self, rank):
        kept = self.axis if self.axis is not None else self.dim
        return [a for a in range(rank) if a != kept] if kept != -1 else list(range(rank))

    def g_to_keras(self, g):
        """torch's g (dims of size 1 except `dim`, or a scalar) -> the stored g."""
        if self.axis is None:
            return np.reshape(g, self._torch_g_shape())
        if self.axis == -1:
            return np.reshape(g, ())
        full = np.broadcast_to(np.reshape(g, self._torch_g_shape()), self.torch_shape).reshape(-1)[self.index]
        axes = tuple(a for a in range(full.ndim) if a != self.axis)
        return np.ascontiguousarray(full[tuple(slice(0, 1) if a in axes else slice(None) for a in range(full.ndim))])

    def v_to_keras(self, v):
        if self.axis is None:
            return np.asarray(v)
        return np.ascontiguousarray(np.reshape(v, -1)[self.index])

    def _torch_g_shape(self):
        if self.dim == -1:
            return ()
        return tuple(size if d == self.dim else 1 for d, size in enumerate(self.torch_shape))


def _weight_norm_spec(layer, name, dim, api):
    entries = [e for e in layer.torch_state("") if e.key == name]
    if not entries:
        raise ValueError(f"weight_norm: {type(layer).__name__} has no parameter {name!r}")
    variable, to_keras = entries[0].variable, entries[0].to_keras
    torch_shape = _weight_norm_torch_shape(layer, variable, to_keras)
    rank = len(torch_shape)
    dim = -1 if dim is None or dim == -1 else dim % rank  # torch: None and -1 both mean the whole tensor
    flat = np.arange(int(np.prod(torch_shape)), dtype=np.int64).reshape(torch_shape)
    index = to_keras(flat) if to_keras is not None else flat
    keras_shape = tuple(variable.shape)
    if dim == -1:
        return WeightNormSpec(name, dim, api, torch_shape, keras_shape, index, -1), variable
    coordinate = np.unravel_index(index, torch_shape)[dim]
    for axis in range(index.ndim):
        others = tuple(a for a in range(index.ndim) if a != axis)
        along = coordinate.min(axis=others, keepdims=True)
        if index.shape[axis] == torch_shape[dim] and np.all(coordinate == along) and \
                len(np.unique(along)) == torch_shape[dim]:  # torch's dim is this axis, one stored slice per index
            return WeightNormSpec(name, dim, api, torch_shape, keras_shape, index, axis), variable
    return WeightNormSpec(name, dim, api, torch_shape, keras_shape, index, None), variable


def _weight_norm_value(spec, g, v):
    """g * v / ||v||, the norm over every axis but the one holding torch's `dim` (torch._weight_norm: no eps)."""
    axes = spec.norm_axes(len(v.shape))
    w = v * (g / tf.sqrt(tf.reduce_sum(tf.square(v), axis=axes, keepdims=spec.axis != -1 and spec.dim != -1)))
    if spec.axis is None:  # kept in torch's order: gather the stored layout
        w = tf.reshape(tf.gather(tf.reshape(w, [-1]), spec.index.reshape(-1)), spec.keras_shape)
    return w


class WeightNormed:
    """Mixin of the parametrized layer classes: `weight` computed from g and v; torch's state_dict names."""

    def torch_state(self, prefix=""):
        spec = self._porter_weight_norm
        entries = [e for e in super().torch_state(prefix) if e.key != prefix + spec.name]
        g_key, v_key = spec.keys(prefix)
        return entries + [StateEntry(g_key, self.weight_norm_g, spec.g_to_keras),
                          StateEntry(v_key, self.weight_norm_v, spec.v_to_keras)]


@functools.cache
def _parametrized_class(cls, name):
    # torch recomputes the weight from g and v before each forward: a value written to it (TCN's
    # `self.conv1.weight.data.normal_(0, 0.01)`) changes nothing, so the setter keeps g and v as they are
    weight = property(lambda self: _weight_norm_value(self._porter_weight_norm, self.weight_norm_g,
                                                      self.weight_norm_v), lambda self, value: None)
    return type(f"Parametrized{cls.__name__}", (WeightNormed, cls), {name: weight})


def _weight_norm_apply(module, name, dim, api):
    if "_porter_weight_norm" in module.__dict__:
        raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    spec, variable = _weight_norm_spec(module, name, dim, api)
    value = np.asarray(variable.numpy())
    if spec.axis is None:  # v in torch's order: invert the stored layout
        torch_value = np.empty(int(np.prod(spec.torch_shape)), value.dtype)
        torch_value[spec.index.reshape(-1)] = value.reshape(-1)
        value = torch_value.reshape(spec.torch_shape)
        norm_axes = spec.norm_axes(value.ndim) if spec.dim != -1 else list(range(value.ndim))
        keepdims = spec.dim != -1
    else:
        norm_axes, keepdims = spec.norm_axes(value.ndim), spec.axis != -1
    g = np.sqrt(np.sum(np.square(value), axis=tuple(norm_axes), keepdims=keepdims))
    module._untrack_variable(variable)
    module.__dict__.pop(name, None)
    object.__setattr__(module, "_porter_weight_norm", spec)
    module.__class__ = _parametrized_class(type(module), name)
    module.weight_norm_g = module.add_weight(shape=g.shape, initializer="zeros", name=f"{name}_g")
    module.weight_norm_v = module.add_weight(shape=value.shape, initializer="zeros", name=f"{name}_v")
    module.weight_norm_g.assign(g)
    module.weight_norm_v.assign(value)
    return module


def weight_norm(module, name="weight", dim=0):
    """torch.nn.utils.weight_norm (legacy): parameters `{name}_g` and `{name}_v`."""
    return _weight_norm_apply(module, name, dim, "legacy")


def parametrized_weight_norm(module, name="weight", dim=0):
    """torch.nn.utils.parametrizations.weight_norm: state_dict keys `parametrizations.{name}.original0/1`."""
    return _weight_norm_apply(module, name, dim, "parametrizations")


def remove_weight_norm(module, name="weight", leave_parametrized=True):
    """torch.nn.utils.remove_weight_norm / parametrize.remove_parametrizations: the computed weight becomes a
    plain parameter again."""
    spec = module.__dict__.get("_porter_weight_norm")
    if spec is None or spec.name != name:
        raise ValueError(f"weight_norm of '{name}' not found in {type(module).__name__}")
    weight = module.weight.numpy()
    base = type(module).__mro__[2]  # (Parametrized<cls>, WeightNormed, cls, ...)
    for variable in (module.weight_norm_g, module.weight_norm_v):
        module._untrack_variable(variable)
    del module.__dict__["weight_norm_g"], module.__dict__["weight_norm_v"], module.__dict__["_porter_weight_norm"]
    module.__class__ = base
    setattr(module, name, module.add_weight(shape=weight.shape, initializer="zeros", name=name))
    getattr(module, name).assign(weight)
    return module
