"""torch.nn.utils spectral normalisation on porter's runtime layers: `spectral_norm` (legacy: parameter
`weight_orig`, buffers `weight_u`, `weight_v`) and `parametrizations.spectral_norm` (keys
`parametrizations.weight.original`, `parametrizations.weight.0._u`, `parametrizations.weight.0._v`).

weight = weight_orig / sigma with sigma = u . (W v), W the weight with torch's `dim` first, flattened to a matrix.
u and v are the power-iteration state torch keeps as buffers (non-trainable variables here, loaded from the
state_dict). Evaluation matches torch exactly. In training (the Keras call in progress runs with training=True), every
read of the weight runs torch's `n_power_iterations` power-iteration steps first, outside the gradient, and stores
the new u and v, as torch does on each forward: the legacy API updates v from u then u from v, the parametrizations
API u from v then v from u.

sigma is computed on the stored (Keras-layout) weight as sum(W * outer(u, v)), outer(u, v) laid out as the weight is.
"""

import functools

import numpy as np
import tensorflow as tf

from porter.runtime.base import StateEntry, call_in_training
from porter.runtime.weight_norm import _weight_norm_torch_shape

SPECTRAL_NORM_KEYS = {"legacy": ("{name}_orig", "{name}_u", "{name}_v"),
                      "parametrizations": ("parametrizations.{name}.original", "parametrizations.{name}.0._u",
                                           "parametrizations.{name}.0._v")}


class SpectralNormSpec:
    def __init__(self, name, dim, api, torch_shape, index, to_keras, n_power_iterations=1, eps=1e-12):
        self.name, self.dim, self.api, self.torch_shape, self.index = name, dim, api, torch_shape, index
        self.to_keras = to_keras
        self.n_power_iterations, self.eps = int(n_power_iterations), float(eps)
        order = [dim] + [d for d in range(len(torch_shape)) if d != dim]
        self.order = order  # torch dims in the matrix's order (dim first)
        self.rows = torch_shape[dim]
        self.from_stored = np.argsort(index.reshape(-1))  # stored position of each torch (row-major) entry

    def matrix(self, stored):
        """The stored weight as torch's matrix: `dim` first, the other dims flattened."""
        torch_order = tf.reshape(tf.gather(tf.reshape(stored, [-1]), self.from_stored), self.torch_shape)
        return tf.reshape(tf.transpose(torch_order, self.order), [self.rows, -1])

    def keys(self, prefix):
        return tuple(prefix + key.format(name=self.name) for key in SPECTRAL_NORM_KEYS[self.api])

    def outer_to_stored(self, u, v):
        """outer(u, v) (the matrix's shape) laid out as the stored weight."""
        matrix = tf.reshape(u, [-1, 1]) * tf.reshape(v, [1, -1])
        permuted = tf.reshape(matrix, [self.torch_shape[d] for d in self.order])
        torch_order = tf.transpose(permuted, np.argsort(self.order))
        return tf.reshape(tf.gather(tf.reshape(torch_order, [-1]), self.index.reshape(-1)), self.index.shape)


class SpectralNormed:
    """Mixin of the spectrally normalised layer classes: `weight` = weight_orig / sigma; torch's state_dict names."""

    def torch_state(self, prefix=""):
        spec = self._porter_spectral_norm
        entries = [e for e in super().torch_state(prefix) if e.key != prefix + spec.name]
        original, u_key, v_key = spec.keys(prefix)
        return entries + [StateEntry(original, self.spectral_norm_original, spec.to_keras),
                          StateEntry(u_key, self.spectral_norm_u), StateEntry(v_key, self.spectral_norm_v)]


def _spectral_norm_value(layer):
    spec = layer._porter_spectral_norm
    weight = layer.spectral_norm_original
    u, v = layer.spectral_norm_u, layer.spectral_norm_v
    if spec.n_power_iterations > 0 and call_in_training():
        u, v = _power_iteration(spec, tf.stop_gradient(weight), tf.cast(u, weight.dtype), tf.cast(v, weight.dtype))
        layer.spectral_norm_u.assign(tf.cast(u, layer.spectral_norm_u.dtype))
        layer.spectral_norm_v.assign(tf.cast(v, layer.spectral_norm_v.dtype))
    sigma = tf.reduce_sum(weight * spec.outer_to_stored(u, v))
    return weight / sigma


def _power_iteration(spec, weight, u, v):
    """torch's power-iteration steps on the weight's matrix: (u, v) after them."""
    matrix = spec.matrix(weight)

    def normalize(x):
        return x / tf.maximum(tf.norm(x), tf.cast(spec.eps, x.dtype))

    for _ in range(spec.n_power_iterations):
        if spec.api == "legacy":  # torch.nn.utils.spectral_norm: v from u, then u from v
            v = normalize(tf.linalg.matvec(matrix, u, transpose_a=True))
            u = normalize(tf.linalg.matvec(matrix, v))
        else:  # parametrizations.spectral_norm's _power_method: u from v, then v from u
            u = normalize(tf.linalg.matvec(matrix, v))
            v = normalize(tf.linalg.matvec(matrix, u, transpose_a=True))
    return tf.stop_gradient(u), tf.stop_gradient(v)


@functools.cache
def _spectral_normed_class(cls, name):
    # a value written to the computed weight changes nothing in torch (it is recomputed before each forward)
    weight = property(_spectral_norm_value, lambda self, value: None)
    return type(f"Parametrized{cls.__name__}", (SpectralNormed, cls), {name: weight})


def _spectral_norm_apply(module, name, dim, eps, api, n_power_iterations=1):
    entries = [e for e in module.torch_state("") if e.key == name]
    if not entries:
        raise ValueError(f"spectral_norm: {type(module).__name__} has no parameter {name!r}")
    variable, to_keras = entries[0].variable, entries[0].to_keras
    torch_shape = _weight_norm_torch_shape(module, variable, to_keras)
    if dim is None:  # torch: 1 for the transposed convolutions, else 0
        dim = 1 if "output_padding" in module.__dict__.get("_conv_config", {}) else 0
    dim = dim % len(torch_shape)
    flat = np.arange(int(np.prod(torch_shape)), dtype=np.int64).reshape(torch_shape)
    index = to_keras(flat) if to_keras is not None else flat
    spec = SpectralNormSpec(name, dim, api, torch_shape, index, to_keras, n_power_iterations, eps)
    columns = int(np.prod(torch_shape)) // spec.rows
    rng = np.random.default_rng(0)
    u, v = rng.standard_normal(spec.rows), rng.standard_normal(columns)
    u, v = u / max(np.linalg.norm(u), eps), v / max(np.linalg.norm(v), eps)
    value = variable.numpy()
    module._untrack_variable(variable)
    module.__dict__.pop(name, None)
    object.__setattr__(module, "_porter_spectral_norm", spec)
    module.__class__ = _spectral_normed_class(type(module), name)
    module.spectral_norm_original = module.add_weight(shape=value.shape, initializer="zeros", name=f"{name}_orig")
    module.spectral_norm_u = module.add_weight(shape=(spec.rows,), initializer="zeros", name=f"{name}_u",
                                               trainable=False)
    module.spectral_norm_v = module.add_weight(shape=(columns,), initializer="zeros", name=f"{name}_v",
                                               trainable=False)
    module.spectral_norm_original.assign(value)
    module.spectral_norm_u.assign(u.astype(np.float32))
    module.spectral_norm_v.assign(v.astype(np.float32))
    return module


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """torch.nn.utils.spectral_norm (legacy): `{name}_orig`, buffers `{name}_u` / `{name}_v`."""
    return _spectral_norm_apply(module, name, dim, eps, "legacy", n_power_iterations)


def parametrized_spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """torch.nn.utils.parametrizations.spectral_norm: `parametrizations.{name}.original`, `...0._u`, `...0._v`."""
    return _spectral_norm_apply(module, name, dim, eps, "parametrizations", n_power_iterations)
