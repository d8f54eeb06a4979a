"""Runtime base: Keras layers that keep torch's module structure, parameter names and layout contract.

Everything in `porter/runtime/` is ordinary, importable Python that the code generator copies (only what a
port needs, with its dependencies) into the generated model module, which therefore imports only
TensorFlow, Keras, NumPy and the standard library. Import lines between runtime modules are dropped when
copied; every runtime name must therefore be unique across the package.

Layout contract. Runtime layers declare `porter_layout`:
- "channels_last": spatial layers (conv, norm over channels, pooling, resize). Input and output are the torch
  tensor with its channel axis (torch dim 1) moved last: (N, C, L) -> (N, L, C), (N, C, H, W) -> (N, H, W, C).
- "source": the layer computes on torch's own axis order (Linear, Flatten, RNNs, attention, Embedding).
- "any": elementwise layers that do not care (activations, Dropout, Identity).
Rank <= 2 tensors are identical in both layouts.

Weights. Every runtime layer implements `torch_state(prefix)` -> list of `StateEntry(key, variable, to_keras)`
where `key` is the torch `state_dict` key, and `to_keras` maps the torch array (numpy) to the variable's shape
(None = unchanged). `load_state_dict` walks these lists; nothing dispatches on types.
"""

import keras
import numpy as np
import tensorflow as tf


class StateEntry:
    """One torch state_dict key, the Keras variable that holds it, and the array transform between them."""

    __slots__ = ("key", "variable", "to_keras")

    def __init__(self, key, variable, to_keras=None):
        self.key = key
        self.variable = variable
        self.to_keras = to_keras

    def __repr__(self):
        return f"StateEntry({self.key!r}, {tuple(self.variable.shape)})"


def named_children(module):
    """(torch name, child) pairs of a ported module, a container or a runtime layer (none), as torch's
    Module.named_children() lists them."""
    if "_torch_children" in module.__dict__:  # a ported class: its `_modules` table
        return list(module._modules.items())
    if "keys_" in module.__dict__:  # ModuleDict
        return list(zip(module.keys_, module.items_))
    if "names" in module.__dict__ and "items" in module.__dict__:  # Sequential
        return list(zip(module.names, module.items))
    if "child_names" in module.__dict__:  # ModuleList
        return [(str(module.child_names.get(i, i)), child) for i, child in enumerate(module.items)]
    return []


def named_modules(module, prefix="", seen=None):
    """(dotted torch name, module) for `module` and every submodule, parents first, as torch's
    Module.named_modules() lists them (each module once when `seen` is a set)."""
    if seen is not None:
        if id(module) in seen:
            return
        seen.add(id(module))
    yield prefix, module
    for name, child in named_children(module):
        yield from named_modules(child, f"{prefix}.{name}" if prefix else name, seen)


# torch's nn.Module or Gluon's Block/HybridBlock as the class of an isinstance/issubclass check
# (`assert isinstance(self.bn, nn.Module)`, `isinstance(act, gluon.Block)`): any of the port's layers and models; the
# port's own classes derive TorchModule, its built-in layers TorchLayer, both Keras layers
AnyLayer = keras.layers.Layer
# torch.Tensor (or nn.Parameter) as the class of an isinstance check (`isinstance(vals, (np.ndarray, torch.Tensor))`):
# a TensorFlow tensor, eager or traced, or a variable (a layer's weights, Keras's or TensorFlow's)
TensorClasses = (tf.Tensor, tf.Variable, keras.Variable)


class TorchModeFlag:
    """torch's mode flag on a ported module: `training` (True until `eval()`), `train(mode)` and `eval()` setting it
    on the module and every submodule, for model code that reads or sets it outside a call (timm's HybridEmbed
    runs its backbone in eval mode in its constructor to size it, then restores each module's flag). A call's mode
    is Keras' `training` argument, which the port's calls take from their caller: the flag decides nothing."""

    training = True

    def train(self, mode=True):
        for _, module in named_modules(self, "", set()):
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self):
        return self.train(False)

    def apply(self, fn):
        """torch's Module.apply: fn(m) for every submodule, children first, then this one (a ported class's
        `self.apply(weights_init)`, HiFi-GAN's `self.ups.apply(init_weights)` on a ModuleList)."""
        for module in list(self.modules())[::-1]:
            fn(module)
        return self


class TorchLayer(TorchModeFlag, keras.layers.Layer):
    """A Keras layer standing for one torch module: it knows its torch parameter names and weight transforms."""

    porter_layout = "source"

    def torch_state(self, prefix=""):
        """List of StateEntry for this layer's parameters and persistent buffers, keys prefixed."""
        return []

    def parameter(self, value, requires_grad=True, name=None):
        """nn.Parameter(value) made by a subclass of a torch layer (timm's ScaledStdConv2d: `self.gain =
        nn.Parameter(...)`): a variable initialised from `value`, in the state after the layer's own entries under
        the attribute name it is assigned to."""
        variable = parameter_weight(self, value, requires_grad, name)
        self.__dict__.setdefault("_torch_pending", []).append(variable)
        return variable

    def register_buffer(self, name, value, persistent=True):
        """torch's register_buffer in a subclass of a torch layer: a persistent buffer is a non-trainable variable
        in the state (after the layer's own entries); a non-persistent one a plain tensor."""
        if value is None or not persistent:
            object.__setattr__(self, name, None if value is None else tf.convert_to_tensor(value))
            return
        variable = buffer_weight(self, value, name)
        self.__dict__.setdefault("_torch_pending", []).append(variable)
        setattr(self, name, variable)

    def __setattr__(self, name, value):
        pending = self.__dict__.get("_torch_pending")
        if pending and any(value is p for p in pending):  # a subclass's own parameter or buffer, named now
            pending[:] = [p for p in pending if p is not value]
            self.__dict__.setdefault("_torch_extra_state", {})[name] = value
        children = self.__dict__.get("_torch_extra_children")
        if hasattr(value, "torch_state") and not name.startswith(("_torch", "_keras")) and \
                not type(self).__module__.startswith(__name__.rsplit(".", 1)[0]):  # (not a runtime layer)
            # a child module of a generated subclass (detectron2's `Conv2d(nn.Conv2d)` keeps `self.norm`): its
            # state follows the layer's own under its name, as torch registers it (keys the layer lists itself,
            # for children its own code sets, are not listed again: collect_state)
            self.__dict__.setdefault("_torch_extra_children", {})[name] = value
        elif children and name in children:  # (`self.norm = None` after all)
            del children[name]
        super().__setattr__(name, value)

    def finish_init(self):
        """Mark a layer whose variables were all created in __init__ as built."""
        self.built = True

    def named_children(self):
        """torch's Module.named_children(): (torch name, child) of a container; none for a leaf layer."""
        return iter(named_children(self))

    def children(self):
        """torch's Module.children(): the children of a container (`for block in self.children()` in an
        nn.Sequential subclass's forward); none for a leaf layer."""
        return iter([child for _, child in named_children(self)])

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """torch's Module.state_dict(): its variables by torch key, writable in place (StateSlot)."""
        return state_dict_of(self, prefix)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """torch's Module.named_parameters (`for p in conv.parameters(): p.requires_grad = False`)."""
        return named_trainable(self, prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """torch's Module.parameters: the variables of named_parameters."""
        for _, variable in self.named_parameters(recurse=recurse):
            yield variable

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """torch's Module.named_modules()."""
        return named_modules(self, prefix, set() if remove_duplicate else None)

    def modules(self):
        """torch's Module.modules(): this layer and every module below it (`for l in conv.modules()` of a leaf
        layer gives the layer itself)."""
        for _, module in self.named_modules():
            yield module

    def compute_mask(self, inputs, previous_mask=None):
        return no_keras_mask(inputs, previous_mask)


def named_trainable(module, prefix="", recurse=True, remove_duplicate=True):
    """torch's Module.named_parameters of a ported module or runtime layer: (torch name, variable) for every
    trainable variable in state_dict order (buffers excluded); a tied variable comes once, under its first name."""
    seen = set()
    for entry in module.torch_state(f"{prefix}." if prefix else ""):
        variable = entry.variable
        if not isinstance(variable, keras.Variable) or not variable.trainable:
            continue
        if not recurse and "." in entry.key[len(prefix) + 1 if prefix else 0:]:
            continue
        if remove_duplicate and id(variable) in seen:
            continue
        seen.add(id(variable))
        yield entry.key, variable


class StateSlot:
    """A value of `state_dict()`: the variable holding that torch key, written in place as torch writes the tensor
    its state_dict shares with the parameter (CBAM's init loop: `self.state_dict()[key][...] = 0`, or an
    initialiser handed it); anything else is the variable's (its shape, its torch view, `assign`)."""

    def __init__(self, variable):
        object.__setattr__(self, "variable", variable)

    def __getattr__(self, name):
        return getattr(self.__dict__["variable"], name)

    def __setitem__(self, index, value):
        if index is not Ellipsis and index != slice(None):
            raise NotImplementedError("porter: a part of a state_dict() value filled in place; fill it whole "
                                      "(`[...] = value`) or index the layer's own weight")
        variable = self.variable
        variable.assign(tf.broadcast_to(tf.cast(value, variable.dtype), variable.shape))

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.variable, dtype=dtype)


def state_dict_of(module, prefix=""):
    """torch's Module.state_dict() of a ported module or runtime layer: torch key -> StateSlot of its variable, in
    torch's order (parameters and persistent buffers)."""
    return {entry.key: StateSlot(entry.variable) for entry in module.torch_state(prefix)
            if hasattr(entry.variable, "assign")}


def call_in_training():
    """Whether the Keras call in progress runs in training mode, for code inside a layer's call that takes no
    `training` argument (a Gluon cell's `unroll`, a spectrally normalised weight read by its layer): the outer call's
    is in Keras's call context (mxnet reads autograd's mode the same way)."""
    try:
        from keras.src.backend.common.global_state import get_global_attribute
    except ImportError:  # another Keras layout: inference
        return False
    context = get_global_attribute("current_call_ctx")
    return bool(context is not None and context.training)



def parameter_weight(layer, value, trainable=True, name=None):
    """nn.Parameter(value) as a variable of `layer`, initialised from `value` (floats in the layer's variable dtype:
    float32, float64 under Keras's float64 policy as torch's `model.double()`)."""
    value = np.asarray(value)
    return layer.add_weight(shape=value.shape, dtype=float_variable_dtype(layer, value.dtype),
                            initializer=keras.initializers.Constant(value), trainable=trainable, name=name)


def buffer_weight(layer, value, name):
    """A persistent buffer (register_buffer) as a non-trainable variable of `layer`, in `value`'s own dtype (a
    float32 one in the layer's variable dtype: float64 under the float64 policy)."""
    value = tf.convert_to_tensor(value)
    dtype = float_variable_dtype(layer, value.dtype) if value.dtype == tf.float32 else value.dtype
    return layer.add_weight(shape=tuple(value.shape), dtype=dtype, trainable=False, name=name,
                            initializer=keras.initializers.Constant(value.numpy()))


def float_variable_dtype(layer, dtype):
    """The dtype of a variable of `layer` (None: the global policy's) holding values of `dtype`: a float one takes
    the policy's variable dtype (float32; float64 under the float64 policy, so a parameter made from a tensor meets
    float64 inputs as torch's `model.double()` has it), any other its own."""
    dtype = tf.as_dtype(dtype)
    if not dtype.is_floating:
        return dtype
    policy = getattr(layer, "dtype_policy", None) or keras.config.dtype_policy()
    return tf.as_dtype(policy.variable_dtype)

def no_keras_mask(inputs, previous_mask=None):
    """compute_mask of porter's layers and models: none. A torch module's `mask` argument is its own (an attention
    mask), not a Keras mask to pass on; overriding compute_mask makes Keras count the layer as taking masks, so a
    call with `mask=...` no longer warns that the layer "does not support masking"."""
    return None


def uniform_fan_in(fan_in):
    """torch's default init for Linear/Conv weights and biases: U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    bound = 1.0 / np.sqrt(fan_in) if fan_in > 0 else 0.0
    return keras.initializers.RandomUniform(-bound, bound)


def static_dims(x):
    """x's dims as a list: Python ints where static, scalar int32 tensors from tf.shape where not (for reshape
    targets that keep an unknown batch)."""
    dynamic = None
    dims = []
    for axis, size in enumerate(x.shape):
        if size is None:
            dynamic = tf.shape(x) if dynamic is None else dynamic
            size = dynamic[axis]
        dims.append(size)
    return dims


def channels_last_perm(rank):
    """Permutation taking a channels-first tensor of `rank` to channels-last."""
    return [0] + list(range(2, rank)) + [1]


def channels_first_perm(rank):
    """Permutation taking a channels-last tensor of `rank` back to torch's channels-first order."""
    return [0, rank - 1] + list(range(1, rank - 1))


def _is_reshape(x, perm):
    """True when `perm` keeps every axis longer than 1 in order, so a reshape does the job without a Transpose."""
    sizes = tuple(x.shape)
    kept = [axis for axis in perm if sizes[axis] != 1]
    unknown = [axis for axis in perm if sizes[axis] is None]
    return kept == sorted(kept) and len(unknown) <= 1


def _permute(x, perm):
    if x is None or list(perm) == sorted(perm):  # (None: an optional tensor left out, `bias if cond else None`)
        return x
    if _is_reshape(x, perm):
        sizes = tuple(x.shape)
        return tf.reshape(x, [-1 if sizes[axis] is None else sizes[axis] for axis in perm])
    return tf.transpose(x, perm)


def permute_axes(x, perm):
    """tf.transpose(x, perm), as a reshape when only size-1 axes move (no data moved, no Transpose traced)."""
    return _permute(x, list(perm))


def permute_broadcast(x, perm, varying):
    """tf.transpose(x, perm) of a tensor whose values differ only along the axes `varying`, which `perm` keeps in
    order (a coordinate map built from sizes, copied over the batch and channel): read once along those axes, put in
    the new order by a reshape, broadcast back to the permuted shape; no data transposed."""
    x = tf.convert_to_tensor(x)
    profile = x[tuple(slice(None) if axis in varying else slice(0, 1) for axis in range(len(x.shape)))]
    moved = tf.reshape(profile, _permuted_shape(profile, perm))
    return tf.broadcast_to(moved, _permuted_shape(x, perm))


def _permuted_shape(x, perm):
    static = [x.shape[axis] for axis in perm]
    return static if None not in static else tf.gather(tf.shape(x), perm)


def broadcast_in_order(y, perm):
    """A torch-layout operand broadcast against a tensor whose axes hold torch dims `perm`: its rank padded with
    leading size-1 axes (torch's broadcasting), then its axes put in that order (a reshape when only size-1 axes
    move)."""
    y = tf.convert_to_tensor(y)
    missing = len(perm) - len(y.shape)
    if missing > 0:
        y = tf.reshape(y, tf.concat([tf.ones([missing], tf.int32), tf.shape(y)], axis=0)) if None in y.shape else \
            tf.reshape(y, [1] * missing + list(y.shape))
    return _permute(y, list(perm))


def to_channels_last(x):
    """torch layout -> channels-last (no-op for rank <= 2, and for None: an optional tensor left out)."""
    if x is None:
        return x
    rank = len(x.shape)
    return x if rank <= 2 else _permute(x, channels_last_perm(rank))


def to_channels_first(x):
    """channels-last -> torch layout (no-op for rank <= 2, and for None: an optional tensor left out)."""
    if x is None:
        return x
    rank = len(x.shape)
    return x if rank <= 2 else _permute(x, channels_first_perm(rank))


def each_image(convert, x):
    """`convert(x)`, item by item where `x` is a list or tuple (a method returning the images it collected under a
    flag, the last image otherwise), value by value where it is a dict (the features a block returned by name)."""
    if isinstance(x, (list, tuple)):
        return type(x)(convert(item) for item in x)
    if isinstance(x, dict):
        return type(x)((key, convert(item)) for key, item in x.items())
    return convert(x)


def collect_state(layer, prefix=""):
    """The StateEntry list of `layer` (a generated module or a runtime layer): its own entries, then the parameters
    and buffers a generated subclass of a runtime layer added (TorchLayer.parameter / register_buffer)."""
    entries = layer.torch_state(prefix)
    extra = layer.__dict__.get("_torch_extra_state")
    if extra:
        known = {e.key for e in entries}
        entries = entries + [StateEntry(prefix + name, variable) for name, variable in extra.items()
                             if prefix + name not in known]
    for name, child in layer.__dict__.get("_torch_extra_children", {}).items():
        known = {e.key for e in entries}
        entries = entries + [e for e in collect_state(child, f"{prefix}{name}.") if e.key not in known]
    return entries


IGNORED_SUFFIXES = ("num_batches_tracked",)  # torch bookkeeping with no Keras counterpart


def load_state_dict(model, state_dict, strict=True):
    """Copy a torch state_dict (numpy arrays keyed by torch's names) into `model`.

    Raises ValueError naming missing, unexpected or mis-shaped keys. Tied weights (one variable under two keys)
    are assigned once per key with the same values, so they stay tied.
    """
    entries = collect_state(model)
    expected = {entry.key for entry in entries}
    given = {key for key in state_dict if not key.endswith(IGNORED_SUFFIXES)}
    missing, unexpected = sorted(expected - given), sorted(given - expected)
    if strict and (missing or unexpected):
        raise ValueError(f"state_dict does not fit {type(model).__name__}: missing keys {missing}; "
                         f"unexpected keys {unexpected}")
    problems = []
    for entry in entries:
        if entry.key not in state_dict:
            continue
        value = np.asarray(state_dict[entry.key])
        value = entry.to_keras(value) if entry.to_keras is not None else value
        if tuple(value.shape) != tuple(entry.variable.shape):
            problems.append(f"{entry.key}: shape {tuple(np.asarray(state_dict[entry.key]).shape)} "
                            f"does not fit {tuple(entry.variable.shape)}")
            continue
        entry.variable.assign(value.astype(entry.variable.dtype))
    if problems:
        raise ValueError("state_dict shapes do not fit: " + "; ".join(problems))


def broadcast_channels_last(y, rank):
    """A torch-layout operand broadcast against a channels-last tensor of `rank`: pad its rank, move channels last."""
    y = tf.convert_to_tensor(y)
    missing = rank - len(y.shape)
    if missing < 0:  # torch's result would have y's dims, not the image's: porter took y for one of lower rank
        raise ValueError(f"a tensor of rank {len(y.shape)} broadcast against a channels-last image of rank {rank}: "
                         f"the port assumed it had at most the image's dims; convert the source with the tensor's "
                         f"rank known (a literal view/reshape)")
    if missing > 0:
        sizes = [1] * missing + [-1 if size is None else size for size in y.shape]
        y = tf.reshape(y, sizes) if sizes.count(-1) <= 1 else tf.reshape(
            y, tf.concat([tf.ones([missing], tf.int32), tf.shape(y)], axis=0))
    return to_channels_last(y)


def flat_to_torch_order(x, channels):
    """A (N, H*W*C) channels-last flatten reordered to torch's (N, C*H*W)."""
    features = x.shape[-1]
    if features == channels:  # one position (after a global pool): the orders agree
        return x
    spatial = features // channels
    x = tf.reshape(x, [-1, spatial, channels])
    return tf.reshape(tf.transpose(x, [0, 2, 1]), [-1, features])


def image_rows_permutation(channels):
    """Load-time transform of a torch Linear weight (C*H*W, in) or bias (C*H*W,) whose output becomes an image
    (N, C, H, W): its rows reordered (H, W, C), so the output splits into the image held channels-last."""

    def to_keras(array):
        rows = array.shape[0]
        grouped = array.reshape(channels, rows // channels, *array.shape[1:])
        return np.swapaxes(grouped, 0, 1).reshape(array.shape)

    return to_keras


def flatten_permutation(channels):
    """Load-time transform of a torch Linear weight (out, C*H*W) for inputs flattened as (H, W, C)."""

    def to_keras(weight):
        out, features = weight.shape
        return weight.reshape(out, channels, features // channels).transpose(0, 2, 1).reshape(out, features)

    return to_keras
