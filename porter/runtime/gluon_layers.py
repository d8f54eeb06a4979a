"""MXNet Gluon layers (`mxnet.gluon.nn.*`) as Keras layers with Gluon's semantics and Gluon's parameter names.

Constructor arguments are Gluon's (`channels`, `kernel_size`, `strides`, `in_channels=0`, `activation=`,
`use_bias`, `flatten`, `prefix`/`params` accepted and ignored). A layer whose input size the constructor leaves
open (`in_units=0`, `in_channels=0`, BatchNorm always unless `in_channels` is given) creates its variables on its
first call, so such a port needs one call on a sample input before `load_state_dict`.

`torch_state(prefix)` yields the keys Gluon's `save_parameters` writes (`weight`/`bias`; BatchNorm `gamma`, `beta`,
`running_mean`, `running_var`) with the load-time transforms (Conv OIHW -> HWIO; Dense keeps (units, in_units)).
Layouts follow the runtime contract: convolutions, BatchNorm and pooling run channels-last; Dense and Flatten
read Gluon's own (channels-first) order, so `flatten=True` flattens (C, H, W) as mxnet does.
"""

import keras
import numpy as np
import tensorflow as tf

from porter.runtime.base import StateEntry, TorchLayer
from porter.runtime.conv import _conv_forward, _conv_torch_to_hwio, _conv_tuple
from porter.runtime.dropout import _dropout_run
from porter.runtime.gluon_nn_ops import _check_full_windows
from porter.runtime.gluon_ops import gluon_activation
from porter.runtime.linear import linear
from porter.runtime.norm import _norm_bn_forward, _norm_training
from porter.runtime.pool import _pool_avg, _pool_max

_GLUON_KERAS_KWARGS = ("name", "dtype", "trainable")


def _gluon_keras_kwargs(kwargs):
    """The Keras keywords among a Gluon layer's extra arguments (`prefix`, `params` ... have no Keras meaning)."""
    return {k: v for k, v in kwargs.items() if k in _GLUON_KERAS_KWARGS and not (k == "dtype" and v == "float32")}


def _gluon_xavier(shape, fan_in, fan_out):
    """A fresh weight for a port used without loaded parameters (Gluon's default init is the user's choice)."""
    bound = np.sqrt(6.0 / max(fan_in + fan_out, 1))
    return keras.initializers.RandomUniform(-bound, bound)


def gluon_shared_variable(params, name, shape):
    """The variable a layer built with `params=block.collect_params()` shares for its parameter `name`: the first of
    those parameters whose name ends with `name` and whose shape is `shape` (None: the layer makes its own)."""
    for key, variable in (params or {}).items():
        if key.rsplit(".", 1)[-1] == name and tuple(variable.shape) == tuple(shape):
            return variable
    return None


def gluon_collect_params(block):
    """block.collect_params(): its variables by state name, for another layer's `params=` (shared weights)."""
    return {entry.key: entry.variable for entry in block.torch_state()}


class GluonPendingVariable:
    """Stands for a variable a deferred layer (Gluon's `in_units=0`) has not created yet; once the layer exists it
    answers for the real one. Lets `load_state_dict` size such layers from the saved arrays, without a sample call."""

    def __init__(self, layer, name):
        self.layer, self.name = layer, name

    def _variable(self):
        variable = getattr(self.layer, self.name)
        if variable is None:
            raise ValueError(f"{self.name} of an unbuilt {type(self.layer).__name__}: call the model once on a "
                             f"sample input first")
        return variable

    @property
    def shape(self):
        return self._variable().shape

    @property
    def dtype(self):
        return self._variable().dtype

    def assign(self, value):
        return self._variable().assign(value)


def _gluon_deferred_state(layer, prefix, names, build_from, to_keras=None):
    """State entries of an unbuilt layer's parameters `names`: loading the first creates the layer's variables
    from the saved array's shape (`build_from(shape)`), then every entry loads into them."""

    def sized(value):
        build_from(value.shape)
        return to_keras(value) if to_keras is not None else value

    return [StateEntry(prefix + name, GluonPendingVariable(layer, name), sized if i == 0 else None)
            for i, name in enumerate(names)]


class GluonDense(TorchLayer):
    """gluon.nn.Dense: y = activation(x W^T + b); `flatten=True` first flattens every axis after the first."""

    porter_layout = "source"

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype="float32", weight_initializer=None,
                 bias_initializer="zeros", in_units=0, **kwargs):
        # `params=other.collect_params()` shares other's weight (GluonNLP ties BERT's decoder to its embedding)
        self._gluon_shared = kwargs.get("params")
        super().__init__(**_gluon_keras_kwargs({**kwargs, "dtype": dtype}))
        self.units, self.activation_name, self.use_bias, self.flatten = units, activation, use_bias, flatten
        self.in_units = in_units
        self.weight = self.bias = None
        if in_units:
            self._gluon_create(in_units)

    def _gluon_create(self, in_units):
        self.in_units = int(in_units)
        init = _gluon_xavier((self.units, self.in_units), self.in_units, self.units)
        self.weight = gluon_shared_variable(self._gluon_shared, "weight", (self.units, self.in_units))
        if self.weight is None:
            self.weight = self.add_weight(shape=(self.units, self.in_units), initializer=init, name="weight")
        if self.use_bias:
            self.bias = self.add_weight(shape=(self.units,), initializer="zeros", name="bias")
        self.built = True

    def build(self, input_shape):
        if self.weight is None:
            sizes = list(input_shape)
            self._gluon_create(int(np.prod(sizes[1:])) if self.flatten else sizes[-1])
        self.built = True

    def __call__(self, x, *args, layout=None, **kwargs):
        if self.weight is None and layout == "channels_last" and not self.flatten and len(x.shape) > 2:
            self._gluon_create(x.shape[-2])  # (deferred `in_units`: the contracted axis is stored second to last)
        return super().__call__(x, *args, layout=layout, **kwargs)

    def call(self, x, layout=None):
        """`layout="channels_last"` (flatten=False, rank > 2): `x` held channels-last, its last dim contracted where
        it is stored, the result channels-last (see `linear`)."""
        x = tf.convert_to_tensor(x)
        if self.flatten and len(x.shape) != 2:
            x = tf.reshape(x, [-1, self.in_units])
        y = linear(x, tf.cast(self.weight, x.dtype), None if self.bias is None else tf.cast(self.bias, x.dtype),
                   layout=None if self.flatten else layout)
        return gluon_activation(y, self.activation_name) if self.activation_name else y

    def torch_state(self, prefix=""):
        if self.weight is None:
            return _gluon_deferred_state(self, prefix, ("weight", "bias") if self.use_bias else ("weight",),
                                         lambda shape: self._gluon_create(shape[1]))
        entries = [StateEntry(prefix + "weight", self.weight)]
        if self.bias is not None:
            entries.append(StateEntry(prefix + "bias", self.bias))
        return entries

    def get_config(self):
        return {**super().get_config(), "units": self.units, "activation": self.activation_name,
                "use_bias": self.use_bias, "flatten": self.flatten, "in_units": self.in_units}


class _GluonConv(TorchLayer):
    """gluon.nn.Conv1D/2D/3D on channels-last input; the kernel is stored HWIO, loaded from Gluon's OIHW (the
    transposed convolutions of gluon_conv_transpose.py change how the kernel is stored, loaded and run)."""

    porter_layout = "channels_last"
    _gluon_dims = 2
    _gluon_layouts = ("NCHW",)

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1, layout=None,
                 activation=None, use_bias=True, weight_initializer=None, bias_initializer="zeros", in_channels=0,
                 **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        n = self._gluon_dims
        if layout is not None and layout not in self._gluon_layouts:
            raise NotImplementedError(f"{type(self).__name__}: layout={layout!r} is not supported by porter yet "
                                      f"(only {self._gluon_layouts[0]})")
        self.channels, self.groups, self.activation_name, self.use_bias = channels, groups, activation, use_bias
        self.kernel_size = _conv_tuple(kernel_size, n, "kernel_size")
        self.strides = _conv_tuple(strides, n, "strides")
        self.dilation = _conv_tuple(dilation, n, "dilation")
        self.padding = _conv_tuple(padding, n, "padding")
        self._gluon_pads = [(p, p) for p in self.padding]
        self.in_channels = in_channels
        self.weight = self.bias = None
        if in_channels:
            self._gluon_create(in_channels)

    def _gluon_create(self, in_channels):
        self.in_channels = int(in_channels)
        if self.in_channels % self.groups or self.channels % self.groups:
            raise ValueError("in_channels and channels must be divisible by groups")
        shape, fan_in, fan_out = self._gluon_kernel()
        self.weight = self.add_weight(shape=shape, initializer=_gluon_xavier(None, fan_in, fan_out), name="weight")
        if self.use_bias:
            self.bias = self.add_weight(shape=(self.channels,), initializer="zeros", name="bias")
        self.built = True

    def _gluon_kernel(self):
        """(the kernel's shape as stored, Xavier's fan in, fan out) once in_channels is known."""
        taps = int(np.prod(self.kernel_size))
        shape = self.kernel_size + (self.in_channels // self.groups, self.channels)
        return shape, self.in_channels // self.groups * taps, self.channels * taps

    def _gluon_in_channels(self, weight_shape):
        """in_channels as a Gluon weight of `weight_shape` (O, I / groups, k...) tells it (a deferred load)."""
        return weight_shape[1] * self.groups

    def _gluon_weight_to_keras(self, weight):
        return _conv_torch_to_hwio(weight)  # (O, I, k...) -> (k..., I, O)

    def build(self, input_shape):
        if self.weight is None:
            self._gluon_create(input_shape[-1])
        self.built = True

    @property
    def out_channels(self):  # what porter's channel bookkeeping reads
        return self.channels

    def call(self, x):
        y = _conv_forward(tf.convert_to_tensor(x), self.weight, self.bias, self.strides, self._gluon_pads,
                          self.dilation, self.groups)
        return gluon_activation(y, self.activation_name) if self.activation_name else y

    def torch_state(self, prefix=""):
        if self.weight is None:
            return _gluon_deferred_state(self, prefix, ("weight", "bias") if self.use_bias else ("weight",),
                                         lambda shape: self._gluon_create(self._gluon_in_channels(shape)),
                                         self._gluon_weight_to_keras)
        entries = [StateEntry(prefix + "weight", self.weight, self._gluon_weight_to_keras)]
        if self.bias is not None:
            entries.append(StateEntry(prefix + "bias", self.bias))
        return entries

    def get_config(self):
        return {**super().get_config(), "channels": self.channels, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "dilation": self.dilation, "groups": self.groups,
                "activation": self.activation_name, "use_bias": self.use_bias, "in_channels": self.in_channels}


class GluonConv1D(_GluonConv):
    """gluon.nn.Conv1D on (N, W, C)."""

    _gluon_dims = 1
    _gluon_layouts = ("NCW",)


class GluonConv2D(_GluonConv):
    """gluon.nn.Conv2D on (N, H, W, C)."""

    _gluon_dims = 2
    _gluon_layouts = ("NCHW",)


class GluonConv3D(_GluonConv):
    """gluon.nn.Conv3D on (N, D, H, W, C) (video nets: C3D, I3D, R(2+1)D); kernel stored (kd, kh, kw, I, O)."""

    _gluon_dims = 3
    _gluon_layouts = ("NCDHW",)


class GluonBatchNorm(TorchLayer):
    """gluon.nn.BatchNorm over the channel axis (axis=1 in Gluon's layout, the last axis here).

    Training normalises with the batch statistics and moves the running ones by `momentum` (running = running *
    momentum + batch * (1 - momentum)); inference and `use_global_stats=True` use the running statistics. With
    `scale=False` gamma is fixed at 1 (mxnet's fix_gamma), as mxnet computes it."""

    porter_layout = "channels_last"

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True, use_global_stats=False,
                 beta_initializer="zeros", gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", in_channels=0, **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        if axis != 1:
            raise NotImplementedError(f"GluonBatchNorm: axis={axis} is not supported by porter yet (only 1)")
        self.axis, self.momentum, self.epsilon, self.center, self.scale = axis, momentum, epsilon, center, scale
        self.use_global_stats, self.in_channels = use_global_stats, in_channels
        self.gamma = self.beta = self.running_mean = self.running_var = None
        if in_channels:
            self._gluon_create(in_channels)

    def _gluon_create(self, channels):
        self.in_channels = int(channels)
        shape = (self.in_channels,)
        self.gamma = self.add_weight(shape=shape, initializer="ones", name="gamma", trainable=self.scale,
                                     autocast=False)
        self.beta = self.add_weight(shape=shape, initializer="zeros", name="beta", trainable=self.center,
                                    autocast=False)
        self.running_mean = self.add_weight(shape=shape, initializer="zeros", name="running_mean", trainable=False,
                                            autocast=False)
        self.running_var = self.add_weight(shape=shape, initializer="ones", name="running_var", trainable=False,
                                           autocast=False)
        self.built = True

    def build(self, input_shape):
        if self.gamma is None:
            self._gluon_create(input_shape[-1])
        self.built = True

    @property
    def num_features(self):  # what porter's channel bookkeeping reads
        return self.in_channels

    def call(self, x, training=None):
        use_batch_stats = _norm_training(training) and not self.use_global_stats
        return _norm_bn_forward(tf.convert_to_tensor(x), self.running_mean, self.running_var,
                                self.gamma if self.scale else None, self.beta, use_batch_stats,
                                1.0 - self.momentum, self.epsilon, use_batch_stats,
                                biased_running_var=True)  # mxnet 1.9.1 moves running_var by the biased variance

    def torch_state(self, prefix=""):
        names = ("gamma", "beta", "running_mean", "running_var")
        if self.gamma is None:
            return _gluon_deferred_state(self, prefix, names, lambda shape: self._gluon_create(shape[0]))
        return [StateEntry(prefix + name, getattr(self, name)) for name in names]

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "momentum": self.momentum, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale, "use_global_stats": self.use_global_stats,
                "in_channels": self.in_channels}


class GluonActivation(TorchLayer):
    """gluon.nn.Activation('relu' | 'sigmoid' | 'tanh' | 'softrelu' | 'softsign')."""

    porter_layout = "any"

    def __init__(self, activation, **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        gluon_activation(tf.zeros([1]), activation)  # an unknown name fails here, as in mxnet
        self.activation_name = activation
        self.finish_init()

    def call(self, x):
        return gluon_activation(x, self.activation_name)

    def get_config(self):
        return {**super().get_config(), "activation": self.activation_name}


class GluonLeakyReLU(TorchLayer):
    """gluon.nn.LeakyReLU(alpha): x if x >= 0 else alpha * x."""

    porter_layout = "any"

    def __init__(self, alpha, **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        self.alpha = alpha
        self.finish_init()

    def call(self, x):
        x = tf.convert_to_tensor(x)
        return tf.where(x >= 0, x, x * tf.cast(self.alpha, x.dtype))

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class GluonDropout(TorchLayer):
    """gluon.nn.Dropout(rate): zeroes elements with probability `rate` in training, scales the rest by
    1 / (1 - rate); identity in inference. (`axes`, mxnet's shared-mask axes, are not supported yet.)"""

    porter_layout = "any"

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        if axes:
            raise NotImplementedError("GluonDropout: axes= is not supported by porter yet")
        self.rate = rate
        self.seed_generator = keras.random.SeedGenerator() if rate > 0 else None
        self.finish_init()

    def call(self, x, training=None):
        return _dropout_run(x, self.rate, training, "plain", False, self.seed_generator)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate}


class GluonFlatten(TorchLayer):
    """gluon.nn.Flatten: (N, ...) -> (N, prod(...)) in Gluon's own axis order."""

    porter_layout = "source"

    def __init__(self, **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        self.finish_init()

    def call(self, x):
        return gluon_flatten(x)


def gluon_flatten(x):
    """F.flatten / nn.Flatten: keep axis 0, merge the rest."""
    x = tf.convert_to_tensor(x)
    rest = x.shape[1:]
    if all(size is not None for size in rest):
        return tf.reshape(x, [-1, int(np.prod(rest))])
    return tf.reshape(x, tf.stack([tf.shape(x)[0], -1]))


class _GluonPool(TorchLayer):
    """gluon.nn.Max/AvgPool1D/2D/3D on channels-last input (`strides=None` means `pool_size`)."""

    porter_layout = "channels_last"
    _gluon_dims = 2
    _gluon_kind = "max"

    def __init__(self, pool_size=2, strides=None, padding=0, layout=None, ceil_mode=False, count_include_pad=True,
                 **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        n = self._gluon_dims
        if layout is not None and layout not in ("NCW", "NCHW", "NCDHW"):
            raise NotImplementedError(f"{type(self).__name__}: layout={layout!r} is not supported by porter yet")
        self.pool_size = _conv_tuple(pool_size, n, "pool_size")
        self.strides = _conv_tuple(strides if strides is not None else pool_size, n, "strides")
        self.padding = _conv_tuple(padding, n, "padding")
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad
        self.finish_init()

    def call(self, x):
        x = tf.convert_to_tensor(x)
        if self.ceil_mode:  # mxnet keeps a last window starting past the input, torch's ceil_mode drops it
            _check_full_windows(x, self.pool_size, self.strides, self.padding)
        if self._gluon_kind == "max":
            return _pool_max(x, self._gluon_dims, self.pool_size, self.strides, self.padding, 1, self.ceil_mode,
                             False, type(self).__name__)
        return _pool_avg(x, self._gluon_dims, self.pool_size, self.strides, self.padding, self.ceil_mode,
                         self.count_include_pad, None, type(self).__name__)

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding, "ceil_mode": self.ceil_mode, "count_include_pad": self.count_include_pad}


class GluonMaxPool1D(_GluonPool):
    _gluon_dims = 1


class GluonMaxPool2D(_GluonPool):
    _gluon_dims = 2


class GluonMaxPool3D(_GluonPool):
    _gluon_dims = 3


class GluonAvgPool1D(_GluonPool):
    _gluon_dims = 1
    _gluon_kind = "avg"


class GluonAvgPool2D(_GluonPool):
    _gluon_dims = 2
    _gluon_kind = "avg"


class GluonAvgPool3D(_GluonPool):
    _gluon_dims = 3
    _gluon_kind = "avg"


class _GluonGlobalPool(TorchLayer):
    """gluon.nn.GlobalAvg/MaxPool1D/2D/3D: the spatial axes reduced to size 1 (kept, as Gluon keeps them)."""

    porter_layout = "channels_last"
    _gluon_kind = "avg"

    def __init__(self, layout=None, **kwargs):
        super().__init__(**_gluon_keras_kwargs(kwargs))
        self.finish_init()

    def call(self, x):
        x = tf.convert_to_tensor(x)
        axes = list(range(1, len(x.shape) - 1))
        reduce = tf.reduce_mean if self._gluon_kind == "avg" else tf.reduce_max
        return reduce(x, axis=axes, keepdims=True)


class GluonGlobalAvgPool1D(_GluonGlobalPool):
    _gluon_kind = "avg"


class GluonGlobalAvgPool2D(_GluonGlobalPool):
    _gluon_kind = "avg"


class GluonGlobalAvgPool3D(_GluonGlobalPool):
    _gluon_kind = "avg"


class GluonGlobalMaxPool1D(_GluonGlobalPool):
    _gluon_kind = "max"


class GluonGlobalMaxPool2D(_GluonGlobalPool):
    _gluon_kind = "max"


class GluonGlobalMaxPool3D(_GluonGlobalPool):
    _gluon_kind = "max"


class GluonXavier(keras.initializers.Initializer):
    """mx.init.Xavier(rnd_type, factor_type, magnitude): uniform in +-sqrt(magnitude / factor) (gaussian: that
    standard deviation), the factor from mxnet's fans of an (out, in, *kernel) shape (avg, in or out)."""

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        self.rnd_type, self.factor_type, self.magnitude = rnd_type, factor_type, float(magnitude)

    def __call__(self, shape, dtype=None):
        shape = tuple(int(s) for s in shape)
        if len(shape) < 2:
            raise ValueError(f"Xavier initializer cannot be applied to vector {shape}: it needs 2 or more axes")
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}.get(self.factor_type)
        if factor is None:
            raise ValueError(f"Xavier: factor_type {self.factor_type!r} is not avg, in or out")
        scale = float(np.sqrt(self.magnitude / factor))
        if self.rnd_type == "uniform":
            return keras.random.uniform(shape, -scale, scale, dtype=dtype or "float32")
        if self.rnd_type == "gaussian":
            return keras.random.normal(shape, 0.0, scale, dtype=dtype or "float32")
        raise ValueError(f"Xavier: rnd_type {self.rnd_type!r} is not uniform or gaussian")

    def get_config(self):
        return {"rnd_type": self.rnd_type, "factor_type": self.factor_type, "magnitude": self.magnitude}


def GluonNormal(sigma=0.01):
    """mx.init.Normal(sigma): normal with mean 0 and standard deviation `sigma`."""
    return keras.initializers.RandomNormal(0.0, sigma)


def GluonUniform(scale=0.07):
    """mx.init.Uniform(scale): uniform in [-scale, scale] (mxnet's default initializer)."""
    return keras.initializers.RandomUniform(-scale, scale)


def GluonZero():
    """mx.init.Zero()."""
    return keras.initializers.Zeros()


def GluonOne():
    """mx.init.One()."""
    return keras.initializers.Ones()


_GLUON_INIT_NAMES = {"zeros": GluonZero, "zero": GluonZero, "ones": GluonOne, "one": GluonOne,
                     "xavier": GluonXavier, "uniform": GluonUniform, "normal": GluonNormal}


def gluon_parameter_value(shape, init=None, dtype="float32"):
    """The first value of a Block's own parameter (`self.params.get(name, shape=, init=)`): `init` an initializer
    (mx.init.* as ported), its registered name ('zeros', 'ones', 'xavier' ...) or None for mxnet's default
    Uniform(0.07). load_state_dict replaces it with the saved value."""
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if any(size <= 0 for size in shape):
        raise NotImplementedError(f"a Gluon parameter of shape {shape}: sizes left open (0) until the first call "
                                  f"are not supported by porter yet; give every size in the constructor")
    if init is None:
        init = GluonUniform()
    elif isinstance(init, str):
        if init.lower() not in _GLUON_INIT_NAMES:
            raise ValueError(f"unknown mxnet initializer name {init!r}")
        init = _GLUON_INIT_NAMES[init.lower()]()
    dtype = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    return np.asarray(init(shape, dtype=dtype))


def gluon_constant_value(value):
    """The value of a Gluon Constant (`self.params.get_constant(name, value)`), as an array."""
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)
