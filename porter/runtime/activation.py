"""torch.nn activation modules and their torch.nn.functional forms, with torch's exact formulas.

Elementwise activations are layout "any". Channel-wise PReLU broadcasts its weight on the channel axis, which is
the last axis of a channels-last tensor (rank <= 2 tensors are the same in both layouts). Softmax-like modules take
their `dim` in torch's axis order ("source"); the functional forms receive axes already remapped ("any").
`inplace=` arguments are accepted and ignored (the translator rebinds in-place results).
"""

import math
import warnings

import keras
import tensorflow as tf

from porter.runtime.base import StateEntry, TorchLayer, to_channels_first, to_channels_last
from porter.runtime.dropout import _dropout_seed, _dropout_select

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _activation_tensor(input):
    return input if isinstance(input, (tf.Tensor, tf.Variable)) else tf.convert_to_tensor(input)


# ----------------------------------------------------------------------------------------------------------------
# Functions (torch.nn.functional signatures)


def relu(input, inplace=False):
    """F.relu / torch.relu / Tensor.relu (and the in-place forms)."""
    return tf.nn.relu(_activation_tensor(input))


def relu6(input, inplace=False):
    """F.relu6: min(max(x, 0), 6)."""
    return tf.nn.relu6(_activation_tensor(input))


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """F.leaky_relu: x if x > 0 else x * negative_slope (any slope, also > 1)."""
    x = _activation_tensor(input)
    return tf.where(x > 0, x, x * negative_slope)


def prelu(input, weight):
    """F.prelu with a channels-last input: `weight` (1 or C values) scales negatives along the channel axis.

    A channels-last tensor has its channel axis last, and rank <= 2 tensors (N, C) too, so the weight broadcasts
    on the last axis; a rank-1 input has no channel axis (torch then needs a single weight).
    """
    x = _activation_tensor(input)
    w = tf.cast(weight, x.dtype)
    if len(x.shape) <= 1 or w.shape[0] == 1:
        w = tf.reshape(w, [])
    return tf.where(x > 0, x, w * x)


def elu(input, alpha=1.0, inplace=False):
    """F.elu: x if x > 0 else alpha * (exp(x) - 1)."""
    x = _activation_tensor(input)
    return tf.where(x > 0, x, alpha * tf.math.expm1(tf.minimum(x, 0)))


def selu(input, inplace=False):
    """F.selu: scale * (x if x > 0 else alpha * (exp(x) - 1)) with torch's constants."""
    x = _activation_tensor(input)
    return tf.where(x > 0, _SELU_SCALE * x, (_SELU_SCALE * _SELU_ALPHA) * tf.math.expm1(tf.minimum(x, 0)))


def celu(input, alpha=1.0, inplace=False):
    """F.celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    x = _activation_tensor(input)
    return tf.where(x > 0, x, alpha * tf.math.expm1(tf.minimum(x, 0) * (1.0 / alpha)))


def gelu(input, approximate="none"):
    """F.gelu: exact 0.5 x (1 + erf(x / sqrt 2)), or the tanh approximation with approximate='tanh'."""
    x = _activation_tensor(input)
    if approximate == "none":
        return 0.5 * x * (1.0 + tf.math.erf(x * math.sqrt(0.5)))
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + tf.math.tanh(inner))
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def silu(input, inplace=False):
    """F.silu: x * sigmoid(x)."""
    return tf.nn.silu(_activation_tensor(input))


def mish(input, inplace=False):
    """F.mish: x * tanh(softplus(x)) (a stable softplus: no overflow for large x)."""
    x = _activation_tensor(input)
    return x * tf.math.tanh(tf.math.softplus(x))


def hardswish(input, inplace=False):
    """F.hardswish: x * min(max(x + 3, 0), 6) / 6."""
    x = _activation_tensor(input)
    return x * tf.clip_by_value(x + 3.0, 0.0, 6.0) / 6.0


def hardsigmoid(input, inplace=False):
    """F.hardsigmoid: min(max(x + 3, 0), 6) / 6."""
    x = _activation_tensor(input)
    return tf.clip_by_value(x + 3.0, 0.0, 6.0) / 6.0


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """F.hardtanh: clamp(x, min_val, max_val)."""
    x = _activation_tensor(input)
    return tf.clip_by_value(x, tf.cast(min_val, x.dtype), tf.cast(max_val, x.dtype))


def sigmoid(input):
    """F.sigmoid / torch.sigmoid / Tensor.sigmoid."""
    return tf.math.sigmoid(_activation_tensor(input))


def tanh(input):
    """F.tanh / torch.tanh / Tensor.tanh."""
    return tf.math.tanh(_activation_tensor(input))


def softplus(input, beta=1.0, threshold=20.0):
    """F.softplus: log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (torch's switch)."""
    x = _activation_tensor(input)
    scaled = x * beta
    linear = scaled > threshold
    # the unused branch is fed a safe value so that neither value nor gradient overflows
    safe = tf.where(linear, tf.zeros_like(scaled), scaled)
    return tf.where(linear, x, tf.math.softplus(safe) / beta)


def softsign(input):
    """F.softsign: x / (1 + |x|)."""
    x = _activation_tensor(input)
    return x / (1.0 + tf.abs(x))


def tanhshrink(input):
    """F.tanhshrink: x - tanh(x)."""
    x = _activation_tensor(input)
    return x - tf.math.tanh(x)


def logsigmoid(input):
    """F.logsigmoid: log(sigmoid(x)), computed stably."""
    return tf.math.log_sigmoid(_activation_tensor(input))


def threshold(input, threshold, value, inplace=False):
    """F.threshold: x if x > threshold else value."""
    x = _activation_tensor(input)
    return tf.where(x <= threshold, tf.cast(value, x.dtype), x)


def hardshrink(input, lambd=0.5):
    """F.hardshrink: x if |x| > lambd else 0."""
    x = _activation_tensor(input)
    return tf.where((x >= -lambd) & (x <= lambd), tf.zeros_like(x), x)


def softshrink(input, lambd=0.5):
    """F.softshrink: x - lambd if x > lambd, x + lambd if x < -lambd, else 0."""
    x = _activation_tensor(input)
    return tf.where(x > lambd, x - lambd, tf.where(x < -lambd, x + lambd, tf.zeros_like(x)))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """F.rrelu: in training a random slope U(lower, upper) per negative element, else the mean slope."""
    return _activation_rrelu(_activation_tensor(input), lower, upper, training, _dropout_seed())


def _activation_rrelu(x, lower, upper, training, seed):
    def train():
        slope = keras.random.uniform(tf.shape(x), minval=lower, maxval=upper, dtype="float32", seed=seed)
        return tf.where(x >= 0, x, x * tf.cast(slope, x.dtype))

    return _dropout_select(training, train, lambda: leaky_relu(x, (lower + upper) / 2.0))


def _softmax_dim(name, dim, rank):
    """torch's legacy implicit dim (dim=None): 0 for ranks 0, 1, 3, else 1 (with torch's deprecation warning)."""
    if dim is not None:
        return dim
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=3)
    return 0 if rank in (0, 1, 3) else 1


def _softmax_input(input, dtype):
    x = _activation_tensor(input)
    return tf.cast(x, dtype) if dtype is not None else x


def _softmax_in_float32(function, x, axis):
    """`function` (softmax, log_softmax) of a half-precision tensor computed in float32 (exp, sums and logs lose
    too much in bfloat16's 8-bit mantissa), the result cast back to x's dtype for the ops after it."""
    function = _along_any_axis(function)
    if x.dtype in (tf.bfloat16, tf.float16):
        return tf.cast(function(tf.cast(x, tf.float32), axis=axis), x.dtype)
    return function(x, axis=axis)


def _along_any_axis(function):
    """tf.nn.softmax / log_softmax along an axis that is not the last one, written as reductions over that axis:
    TensorFlow's own moves the axis last and back (two Transposes), as a channel softmax of a channels-last image
    or one over a radix axis would pay."""
    def along(x, axis):
        if axis in (-1, len(x.shape) - 1):
            return function(x, axis=axis)
        shifted = x - tf.stop_gradient(tf.reduce_max(x, axis=axis, keepdims=True))
        if function is tf.nn.log_softmax:
            return shifted - tf.math.log(tf.reduce_sum(tf.exp(shifted), axis=axis, keepdims=True))
        exponent = tf.exp(shifted)
        return exponent / tf.reduce_sum(exponent, axis=axis, keepdims=True)

    return along


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """F.softmax / torch.softmax / Tensor.softmax along `dim` (cast to `dtype` first when given)."""
    x = _softmax_input(input, dtype)
    if len(x.shape) == 0:
        return tf.ones_like(x)
    return _softmax_in_float32(tf.nn.softmax, x, _softmax_dim("softmax", dim, len(x.shape)))


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """F.log_softmax / torch.log_softmax / Tensor.log_softmax."""
    x = _softmax_input(input, dtype)
    if len(x.shape) == 0:
        return tf.zeros_like(x)
    return _softmax_in_float32(tf.nn.log_softmax, x, _softmax_dim("log_softmax", dim, len(x.shape)))


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """F.softmin: softmax(-x)."""
    x = _softmax_input(input, dtype)
    if len(x.shape) == 0:
        return tf.ones_like(x)
    return _softmax_in_float32(tf.nn.softmax, -x, _softmax_dim("softmin", dim, len(x.shape)))


def glu(input, dim=-1):
    """F.glu: a * sigmoid(b) where a, b are the two halves of `input` along `dim`."""
    x = _activation_tensor(input)
    if x.shape[dim] is not None and x.shape[dim] % 2:
        raise ValueError(f"glu: halving dimension must be even, but dimension {dim} is size {x.shape[dim]}")
    a, b = tf.split(x, 2, axis=dim)
    return a * tf.math.sigmoid(b)


# ----------------------------------------------------------------------------------------------------------------
# Module classes


class _ActivationLayer(TorchLayer):
    """Common base: stateless elementwise activation keeping its torch constructor arguments for get_config."""

    porter_layout = "any"

    def __init__(self, inplace=None, **kwargs):
        # every activation takes `inplace=` and ignores it: timm's own GELU, SiLU, Sigmoid... take it where torch's
        # do not, and its `create_act_layer(act_layer, inplace=True)` hands it to whichever class it resolved
        super().__init__(**kwargs)

    def _activation_init(self, **config):
        self._activation_config = config
        self.finish_init()

    def get_config(self):
        return {**super().get_config(), **self._activation_config}


class ReLU(_ActivationLayer):
    def __init__(self, inplace=False, **kwargs):
        super().__init__(**kwargs)
        self._activation_init(inplace=inplace)

    def call(self, x):
        return relu(x)


class ReLU6(_ActivationLayer):
    def __init__(self, inplace=False, **kwargs):
        super().__init__(**kwargs)
        self._activation_init(inplace=inplace)

    def call(self, x):
        return relu6(x)


class LeakyReLU(_ActivationLayer):
    def __init__(self, negative_slope=0.01, inplace=False, **kwargs):
        super().__init__(**kwargs)
        self.negative_slope = negative_slope
        self._activation_init(negative_slope=negative_slope, inplace=inplace)

    def call(self, x):
        return leaky_relu(x, self.negative_slope)


class PReLU(TorchLayer):
    """torch.nn.PReLU: weight (num_parameters,) named 'weight', applied on the channel axis.

    Layout "channels_last": the channel axis (torch dim 1) is last. With num_parameters == 1 the op is
    elementwise, so any layout is correct (the instance reports porter_layout "any").
    """

    porter_layout = "channels_last"

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        self.num_parameters, self.init = num_parameters, init
        if num_parameters == 1:
            self.porter_layout = "any"
        self.weight = self.add_weight(shape=(num_parameters,), initializer=keras.initializers.Constant(init),
                                      name="weight")
        self.finish_init()

    def call(self, x):
        if self.num_parameters > 1 and x.shape[-1] is not None and len(x.shape) >= 2 \
                and x.shape[-1] != self.num_parameters:
            raise ValueError(f"PReLU: {self.num_parameters} parameters but the channel axis (last, channels-last) "
                             f"has size {x.shape[-1]}")
        return prelu(x, self.weight)

    def torch_state(self, prefix=""):
        return [StateEntry(prefix + "weight", self.weight)]

    def get_config(self):
        return {**super().get_config(), "num_parameters": self.num_parameters, "init": self.init}


class RReLU(_ActivationLayer):
    """torch.nn.RReLU: random negative slope U(lower, upper) in training, (lower + upper) / 2 in inference."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False, **kwargs):
        super().__init__(**kwargs)
        self.lower, self.upper = lower, upper
        self.seed_generator = keras.random.SeedGenerator()
        self._activation_init(lower=lower, upper=upper, inplace=inplace)

    def call(self, x, training=None):
        return _activation_rrelu(x, self.lower, self.upper, training, self.seed_generator)


class ELU(_ActivationLayer):
    def __init__(self, alpha=1.0, inplace=False, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha
        self._activation_init(alpha=alpha, inplace=inplace)

    def call(self, x):
        return elu(x, self.alpha)


class SELU(_ActivationLayer):
    def __init__(self, inplace=False, **kwargs):
        super().__init__(**kwargs)
        self._activation_init(inplace=inplace)

    def call(self, x):
        return selu(x)


class CELU(_ActivationLayer):
    def __init__(self, alpha=1.0, inplace=False, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha
        self._activation_init(alpha=alpha, inplace=inplace)

    def call(self, x):
        return celu(x, self.alpha)


class GELU(_ActivationLayer):
    def __init__(self, approximate="none", **kwargs):
        super().__init__(**kwargs)
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate
        self._activation_init(approximate=approximate)

    def call(self, x):
        return gelu(x, self.approximate)


class SiLU(_ActivationLayer):
    def __init__(self, inplace=False, **kwargs):
        super().__init__(**kwargs)
        self._activation_init(inplace=inplace)

    def call(self, x):
        return silu(x)


class Mish(_ActivationLayer):
    def __init__(self, inplace=False, **kwargs):
        super().__init__(**kwargs)
        self._activation_init(inplace=inplace)

    def call(self, x):
        return mish(x)


class Hardswish(_ActivationLayer):
    def __init__(self, inplace=False, **kwargs):
        super().__init__(**kwargs)
        self._activation_init(inplace=inplace)

    def call(self, x):
        return hardswish(x)


class Hardsigmoid(_ActivationLayer):
    def __init__(self, inplace=False, **kwargs):
        super().__init__(**kwargs)
        self._activation_init(inplace=inplace)

    def call(self, x):
        return hardsigmoid(x)


class Hardtanh(_ActivationLayer):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None, **kwargs):
        super().__init__(**kwargs)
        if min_value is not None:  # torch's deprecated aliases win, as in torch
            min_val = min_value
        if max_value is not None:
            max_val = max_value
        if max_val <= min_val:
            raise ValueError(f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val = min_val, max_val
        self._activation_init(min_val=min_val, max_val=max_val, inplace=inplace)

    def call(self, x):
        return hardtanh(x, self.min_val, self.max_val)


class Sigmoid(_ActivationLayer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._activation_init()

    def call(self, x):
        return sigmoid(x)


class Tanh(_ActivationLayer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._activation_init()

    def call(self, x):
        return tanh(x)


class Softplus(_ActivationLayer):
    def __init__(self, beta=1.0, threshold=20.0, **kwargs):
        super().__init__(**kwargs)
        self.beta, self.threshold = beta, threshold
        self._activation_init(beta=beta, threshold=threshold)

    def call(self, x):
        return softplus(x, self.beta, self.threshold)


class Softsign(_ActivationLayer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._activation_init()

    def call(self, x):
        return softsign(x)


class Tanhshrink(_ActivationLayer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._activation_init()

    def call(self, x):
        return tanhshrink(x)


class LogSigmoid(_ActivationLayer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._activation_init()

    def call(self, x):
        return logsigmoid(x)


class Threshold(_ActivationLayer):
    def __init__(self, threshold, value, inplace=False, **kwargs):
        super().__init__(**kwargs)
        self.threshold, self.value = threshold, value
        self._activation_init(threshold=threshold, value=value, inplace=inplace)

    def call(self, x):
        return threshold(x, self.threshold, self.value)


class Hardshrink(_ActivationLayer):
    def __init__(self, lambd=0.5, **kwargs):
        super().__init__(**kwargs)
        self.lambd = lambd
        self._activation_init(lambd=lambd)

    def call(self, x):
        return hardshrink(x, self.lambd)


class Softshrink(_ActivationLayer):
    def __init__(self, lambd=0.5, **kwargs):
        super().__init__(**kwargs)
        self.lambd = lambd
        self._activation_init(lambd=lambd)

    def call(self, x):
        return softshrink(x, self.lambd)


class _AlongDim(_ActivationLayer):
    """An activation along torch dim `dim` (a constructor argument in torch's axis order, layout "source"). It also
    computes on a channels-last tensor of rank > 2 as it lies (`layout="channels_last"`, see `runs_in`), reading
    `dim` where that layout stores it: Conformer's `nn.GLU(dim=1)` between two Conv1d moves no data. dim=None
    (torch's legacy rule, which depends on the rank) runs in torch's order."""

    porter_layout = "source"

    def __init__(self, dim=None, **kwargs):
        super().__init__(**kwargs)
        self.dim = dim
        self._activation_init(dim=dim)

    def along(self, x, dim):
        raise NotImplementedError

    def call(self, x, layout=None, layout_out=None):
        rank = len(x.shape)
        if layout != "channels_last" or rank <= 2:
            y = self.along(x, self.dim)
            return to_channels_last(y) if layout_out == "channels_last" and rank > 2 else y
        if self.dim is None:
            y = self.along(to_channels_first(x), None)
            return y if layout_out == "source" else to_channels_last(y)
        dim = self.dim % rank
        y = self.along(x, 0 if dim == 0 else (rank - 1 if dim == 1 else dim - 1))
        return to_channels_first(y) if layout_out == "source" else y

    def runs_in(self, layout):
        """Torch's order, and channels-last too."""
        return layout in ("source", "channels_last")


class Softmax(_AlongDim):
    """torch.nn.Softmax(dim): `dim` is in torch's axis order; dim=None uses torch's legacy rule."""

    def along(self, x, dim):
        return softmax(x, dim)


class LogSoftmax(_AlongDim):
    def along(self, x, dim):
        return log_softmax(x, dim)


class Softmin(_AlongDim):
    def along(self, x, dim):
        return softmin(x, dim)


class GLU(_AlongDim):
    def __init__(self, dim=-1, **kwargs):
        super().__init__(dim=dim, **kwargs)

    def along(self, x, dim):
        return glu(x, dim)
