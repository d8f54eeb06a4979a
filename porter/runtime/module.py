"""Base class of generated model classes and torch's containers (Sequential, ModuleList, ModuleDict).

A generated class keeps torch's module tree: `TorchModule.__setattr__` records children and parameters in
assignment order under their torch names (attributes renamed to avoid Keras' reserved names carry their torch
name in `torch_names`), so `torch_state` yields exactly the keys of torch's `Module.state_dict()`.
"""

import inspect
import re
import threading

import keras
import numpy as np
import tensorflow as tf

from porter.runtime.base import (
    StateEntry,
    TorchLayer,
    TorchModeFlag,
    buffer_weight,
    collect_state,
    flatten_permutation,
    float_variable_dtype,
    image_rows_permutation,
    named_children,
    named_modules,
    named_trainable,
    no_keras_mask,
    parameter_weight,
    state_dict_of,
    to_channels_first,
    to_channels_last,
)
from porter.runtime.conv import _conv_torch_to_hwio

_VARARGS = {}  # function -> (its signature without self, names of its *args/**kwargs parameters)


def _stored_order(layout):
    """The torch dims a tensor in `layout` "permuted:1,0,2" stores in order ([1, 0, 2]), None for any other layout."""
    if not isinstance(layout, str) or not layout.startswith("permuted:"):
        return None
    return [int(d) for d in layout.split(":", 1)[1].split(",")]


def _varargs_signature(call):
    """`call`'s signature and its variadic parameter names, worked out once per function (it runs on every call)."""
    function = getattr(call, "__func__", call)
    found = _VARARGS.get(function)
    if found is None:
        signature = inspect.signature(call)
        variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        names = tuple(p.name for p in signature.parameters.values() if p.kind in variadic)
        found = _VARARGS[function] = (signature, names)
    return found


def _mixes_tensors_in_varargs(call, args, kwargs):
    """True when `call`'s *args or **kwargs would receive tensors and plain values together."""
    signature, variadic = _varargs_signature(call)
    if not variadic:
        return False
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return False
    for name in variadic:
        if name not in bound.arguments:
            continue
        values = bound.arguments[name]
        values = list(values.values()) if isinstance(values, dict) else list(values)
        flat = [v for value in values for v in tf.nest.flatten(value)]
        tensors = [tf.is_tensor(v) or isinstance(v, keras.Variable) for v in flat]
        if any(tensors) and not all(t or v is None for t, v in zip(tensors, flat)):
            return True
    return False


def _shared_open_calls():
    """The count of TorchModule calls in progress, one for the whole process (replica threads trace one at a time;
    0 means the next call is the model's own). Shared, not a class attribute: the ports of a package load their
    siblings' ports, each with a runtime of its own, and a sibling's block called inside the model is no model's
    own call (under mixed_bfloat16 it would return float32)."""
    shared = getattr(keras.layers.Layer, "_porter_open_calls", None)
    if shared is None:
        shared = [0]
        keras.layers.Layer._porter_open_calls = shared
    return shared


_OPEN_CALLS = _shared_open_calls()


class TorchModule(TorchModeFlag, keras.Model):
    """A generated model class: Keras model whose state is named and ordered like the torch module's."""

    porter_layout = "source"
    torch_names = {}  # Keras attribute name -> torch attribute name, for renamed attributes
    torch_flatten_inputs = {}  # torch path of a Linear -> expression of the channel count of the flatten it reads
    torch_image_rows = {}  # torch path of a Linear -> expression of the channel count of the image it is viewed as
    torch_held_reshapes = ()  # torch paths of Flatten / Unflatten children that run on images held channels-last
    # `model.channels_last_io = True`: the model's image inputs and outputs are channels-last (NHWC), so a convnet
    # runs without a single Transpose (data from `porter data --channels-last-io`, train_tpu.py
    # --channels-last-io); False keeps torch's layout at the boundary
    channels_last_io = False

    def __init__(self, **kwargs):
        if kwargs.get("name") is None and type(self).__name__.startswith("_"):
            # Keras names a layer after its class (`_MobileNetV3` -> `__mobile_net_v3`), and a leading underscore
            # is no valid TensorFlow root name scope: a traced call would fail
            base = re.sub(r"(?<!^)(?=[A-Z])", "_", type(self).__name__.lstrip("_") or "module").lower()
            kwargs["name"] = f"{base}_{keras.backend.get_uid(base)}"
        super().__init__(**kwargs)
        self._allow_non_tensor_positional_args = True  # torch passes any value positionally (a packed sequence)

    def compute_mask(self, inputs, previous_mask=None):
        return no_keras_mask(inputs, previous_mask)

    def with_layouts(self, layout, layout_out):
        """This instance, told to run the case of its `call` that takes its first image in `layout` and returns
        `layout_out` (a block a factory-built model holds: the container hands it channels-last images); the
        containers holding it read both."""
        self.porter_layout, self.layout_out = layout, layout_out
        return self

    def io_input(self, x):
        """A forward argument the model works on channels-last: transposed from torch's layout unless the model
        takes channels-last input."""
        return x if self.channels_last_io else to_channels_last(x)

    def io_output(self, x):
        """A channels-last result: in torch's layout unless the model returns channels-last output."""
        return x if self.channels_last_io else to_channels_first(x)

    def __call__(self, *args, **kwargs):
        """Under a mixed policy (mixed_bfloat16: float32 variables, bfloat16 compute) the model's own call returns
        float32, as TPU training wants its logits for the loss; calls of submodules keep the compute dtype."""
        outermost = _OPEN_CALLS[0] == 0
        if self.torch_held_reshapes and "_porter_held" not in self.__dict__:
            self._hold_reshapes()
        boundary = outermost and self.porter_layout == "channels_last" and kwargs.get("layout") is None
        if boundary and args and hasattr(args[0], "shape"):
            # a block laid out channels-last used as a model of its own (a second model of the file, a block
            # tried alone): it takes torch's layout like any model, converted here
            args = (to_channels_last(args[0]),) + tuple(args[1:])
        held = _stored_order(self.porter_layout) if outermost and kwargs.get("layout") is None else None
        if held is not None and args and hasattr(args[0], "shape"):  # a block its caller hands a tensor held
            args = (tf.transpose(args[0], held),) + tuple(args[1:])  # permuted, used alone: torch's order too
        _OPEN_CALLS[0] += 1
        try:
            if not outermost and self.built and _mixes_tensors_in_varargs(self.call, args, kwargs):
                # torch's `forward(self, x, *args, **kwargs)` handed tensors and plain values together (a wrapper
                # passing `context=tensor, kv_include_self=True` on): Keras refuses such a nested argument, so the
                # call runs directly (inside the caller's call context, which carries `training`)
                outputs = self.call(*args, **kwargs)
            else:
                outputs = super().__call__(*args, **kwargs)
        finally:
            _OPEN_CALLS[0] -= 1
        if boundary and (_layout_out_of(self, args[0] if args else None) or "channels_last") == "channels_last":
            outputs = tf.nest.map_structure(
                lambda y: to_channels_first(y) if hasattr(y, "shape") and len(y.shape) > 2 else y, outputs)
        returned = _stored_order(getattr(self, "layout_out", None) or self.porter_layout) if held is not None else None
        if returned is not None and hasattr(outputs, "shape"):
            outputs = tf.transpose(outputs, [returned.index(d) for d in range(len(returned))])
        if outermost and self.compute_dtype != self.variable_dtype:
            return tf.nest.map_structure(_float32_output, outputs)
        return outputs

    def _hold_reshapes(self):
        """Tell the Flatten / Unflatten children at `torch_held_reshapes` to run on images held channels-last (the
        translator found each beside a Linear whose weights load permuted: `torch_flatten_inputs`,
        `torch_image_rows`), once, before the first call."""
        object.__setattr__(self, "_porter_held", True)
        for path in self.torch_held_reshapes:
            self._module_at(path).hold()

    def _module_at(self, path):
        """The submodule at a torch path the translator wrote: names, or positions in a Sequential whose children
        `add_module` named (`head.2` of children named norm, pool, flat); None where there is none."""
        module = self
        for part in path.split("."):
            children = module._modules if hasattr(module, "_modules") else {}
            if part in children:
                module = children[part]
            elif part.isdigit() and int(part) < len(children):
                module = list(children.values())[int(part)]
            else:
                return None
        return module

    def __setattr__(self, name, value):
        # torch registers `self._blocks` as it does `self.blocks` (Keras sets no such attribute of its own)
        if not name.startswith("__") and isinstance(value, (keras.layers.Layer, keras.Variable)):
            registry = self.__dict__.get("_torch_children")
            if registry is None:
                registry = {}
                object.__setattr__(self, "_torch_children", registry)
            registry.pop(name, None)
            registry[name] = value
        super().__setattr__(name, value)

    def __delattr__(self, name):
        """`del model.fc` (a factory swapping heads) drops the child from the state, as torch does."""
        self.__dict__.get("_torch_children", {}).pop(name, None)
        value = getattr(self, name, None)
        super().__delattr__(name)
        if isinstance(value, keras.layers.Layer):  # nor does Keras track it as a sublayer any more
            layers = getattr(self, "_layers", None)
            if isinstance(layers, list) and any(layer is value for layer in layers):
                layers[:] = [layer for layer in layers if layer is not value]

    def register_buffer(self, name, value, persistent=True, kernel=False):
        """torch's register_buffer: persistent buffers are non-trainable variables loaded from the state_dict.
        `kernel=True`: a filter the class reads only as a functional convolution's weight (BlurPool's), stored as a
        Conv layer stores its kernel, (k..., I/g, O) for torch's (O, I/g, k...), its torch view on the variable
        (the state_dict's array is transposed on load)."""
        if value is None:
            object.__setattr__(self, name, None)
            return
        view = None
        if kernel:
            value = np.asarray(value)
            view = (tuple(value.shape), _conv_torch_to_hwio)
            value = _conv_torch_to_hwio(value)
        if persistent:
            variable = buffer_weight(self, value, name)
            if view is not None:
                variable.porter_torch_view = view
            setattr(self, name, variable)
        else:
            object.__setattr__(self, name, tf.convert_to_tensor(value))

    def register_parameter(self, name, value):
        """torch's register_parameter / nn.Parameter assignment."""
        setattr(self, name, value)

    def add_module(self, name, module):
        setattr(self, name, module)

    def parameter(self, value, requires_grad=True, name=None):
        """nn.Parameter(value): a variable initialised from `value` (numpy/tf); inside a ParameterBuild, what that
        build makes of it (a parameter whose rows live elsewhere gets no variable)."""
        value = np.asarray(value)

        def variable():
            return parameter_weight(self, value, requires_grad, name)

        build = ParameterBuild.current()
        return variable() if build is None else build.parameter(value.shape, float_variable_dtype(self, value.dtype),
                                                                 variable)

    def torch_state(self, prefix=""):
        entries = []
        for name, child in self.__dict__.get("_torch_children", {}).items():
            torch_name = self.torch_names.get(name, name)
            if isinstance(child, keras.Variable):  # (a kernel buffer: transposed on load, its torch view says how)
                view = getattr(child, "porter_torch_view", None)
                entries.append(StateEntry(prefix + torch_name, child, view[1] if view is not None else None))
            elif hasattr(child, "torch_state"):
                entries.extend(collect_state(child, prefix + torch_name + "."))
        for path, channels in self.torch_flatten_inputs.items():
            permute = flatten_permutation(int(self._channel_count(channels)))
            entries = self._permuted(entries, path, f"{prefix}{path}", ("weight",), permute)
        for path, channels in self.torch_image_rows.items():
            permute = image_rows_permutation(int(self._channel_count(channels)))
            entries = self._permuted(entries, path, f"{prefix}{path}", ("weight", "bias"), permute)
        return entries

    def _permuted(self, entries, path, key, names, permute):
        """`entries` with the Linear at torch path `path` (state keys `key`.weight ...) loading its `names` through
        `permute` as well: found as a module (a position in a Sequential whose children have names), else by key."""
        linear = self._module_at(path)
        variables = [getattr(linear, name, None) for name in names] if linear is not None else []
        if any(v is not None for v in variables):
            return [StateEntry(e.key, e.variable, then(e.to_keras, permute)) if any(
                e.variable is v for v in variables if v is not None) else e for e in entries]
        keys = {f"{key}.{name}" for name in names}
        return [StateEntry(e.key, e.variable, then(e.to_keras, permute)) if e.key in keys else e for e in entries]

    def _channel_count(self, expression):
        """The value of a channel-count expression porter wrote (`self.conv2.out_channels`), in the names of the
        model module that defines this class."""
        namespace = {**globals(), **getattr(type(self).__init__, "__globals__", {})}
        return eval(expression, namespace, {"self": self})

    def modules(self):
        """Submodules in registration order, depth first (torch's Module.modules())."""
        yield self
        for child in self.__dict__.get("_torch_children", {}).values():
            if hasattr(child, "modules"):
                yield from child.modules()
            elif isinstance(child, keras.layers.Layer):
                yield child

    def children(self):
        return [c for c in self.__dict__.get("_torch_children", {}).values() if isinstance(c, keras.layers.Layer)]

    def named_children(self):
        """torch's Module.named_children(): (torch name, child) in registration order."""
        return iter(named_children(self))

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """torch's Module.named_modules(): (dotted torch name, module), parents first."""
        return named_modules(self, prefix, set() if remove_duplicate else None)

    @property
    def _modules(self):
        """torch's name -> child dict (`self._modules.items()`)."""
        return {self.torch_names.get(name, name): child for name, child in
                self.__dict__.get("_torch_children", {}).items() if isinstance(child, keras.layers.Layer)}

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """torch's Module.state_dict() (an init loop over it, CBAM's): its variables by torch key, writable in place
        (StateSlot); load_state_dict(model, ...) loads the port."""
        return state_dict_of(self, prefix)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """torch's Module.named_parameters: (torch name, variable) for every trainable variable in state_dict
        order (buffers excluded); a tied variable comes once, under its first name."""
        return named_trainable(self, prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """torch's Module.parameters: the variables of named_parameters."""
        for _, variable in self.named_parameters(recurse=recurse):
            yield variable


class ParameterBuild:
    """The model build in progress on this thread that decides how its modules' nn.Parameter values are made
    (embedding's TableBuild: one the TPU embedding API serves gets no variable). A model's own code makes its
    parameters, so the build is this thread's, not an argument; `current()` is None outside any."""

    active = threading.local()

    @staticmethod
    def current():
        return getattr(ParameterBuild.active, "build", None)


def new_parameter(value, requires_grad=True):
    """nn.Parameter(value) made outside a module (a helper function): a variable the module it is assigned to
    tracks (and names, for load_state_dict) like its own."""
    value = np.asarray(value)
    dtype = float_variable_dtype(None, value.dtype)

    def variable():
        return keras.Variable(value, dtype=dtype, trainable=requires_grad)

    build = ParameterBuild.current()  # made like a module's own (TorchModule.parameter)
    return variable() if build is None else build.parameter(value.shape, dtype, variable)


def _float32_output(value):
    """A half-precision floating tensor as float32; anything else unchanged."""
    if isinstance(value, (tf.Tensor, tf.Variable)) and value.dtype in (tf.bfloat16, tf.float16):
        return tf.cast(value, tf.float32)
    return value


def _layout_of(layer):
    return getattr(layer, "porter_layout", "any")


def _layout_out_of(layer, x):
    """The layout `layer` returns its result in for the tensor `x` handed to it: its `layout_out`, or the one of
    the case of its `call` for the rank of `x` (`rank_layouts_out`: a block run on images and on sequences)."""
    by_rank = getattr(layer, "rank_layouts_out", None)
    if by_rank and hasattr(x, "shape") and len(x.shape) in by_rank:
        return by_rank[len(x.shape)]
    return getattr(layer, "layout_out", None)


def _to_layout(x, current, wanted):
    """Convert `x` from `current` to `wanted` layout ("channels_last"/"source", or "permuted:1,0,2": torch's dims
    stored in that order); "any" wants nothing."""
    if isinstance(x, (list, tuple)) and wanted != "any" and wanted != current:  # a list of images: item by item
        return type(x)(_to_layout(item, current, wanted)[0] for item in x), wanted
    if wanted == "any" or wanted == current or not hasattr(x, "shape"):
        return x, current
    if _stored_order(current) is not None or _stored_order(wanted) is not None:
        held, target = _dims_stored(current, len(x.shape)), _dims_stored(wanted, len(x.shape))
        return tf.transpose(x, [held.index(d) for d in target]), wanted
    return (to_channels_last(x) if wanted == "channels_last" else to_channels_first(x)), wanted


def _dims_stored(layout, rank):
    """The torch dims a tensor of `rank` in `layout` stores, in order."""
    order = _stored_order(layout)
    if order is not None:
        return order
    return [0] + list(range(2, rank)) + [1] if layout == "channels_last" and rank > 2 else list(range(rank))


def runs_in(layer, layout):
    """Whether `layer` computes on a tensor held in `layout` as it is (`layer(x, layout=..., layout_out=...)`): a
    1x1 convolution contracts whichever axis holds the channels, an einops layer reads its pattern in the order
    the tensor is stored. Such layers take the layout they are handed instead of a conversion."""
    check = getattr(layer, "runs_in", None)
    return callable(check) and layout in ("channels_last", "source") and check(layout)


def _runs_on_held(layer, held):
    """Whether `layer` computes on tokens whose axes hold torch's dims in the order `held` as they lie: a layer told
    the order (LayerNorm: `takes_held_order`), or one along the last dim (Linear: `last_axis_only`) where the last
    axis holds it."""
    return getattr(layer, "takes_held_order", False) or getattr(layer, "last_axis_only", False) and \
        held[-1] == len(held) - 1


def _free_layout(layer, current):
    """The layout a layer that writes any layout at no cost (an einops layer) writes where the layers after it take
    either: the one its pattern reaches without moving data (MLP-Mixer's `Rearrange('b n d -> b d n')` before the
    token-mixing Linears: channels-last, the tokens left where they lie), else the one held."""
    choose = getattr(layer, "free_layout", None)
    return choose(current) if callable(choose) else current


def _wanted_after(layers, final):
    """The layout the first layer of `layers` that needs one of its own wants, else `final`; None when the next
    layer that cares writes its result in any layout at no cost (an einops layer: then the layout held is kept).
    Elementwise layers take any layout, and so do flexible ones that hand on the layout they get (a 1x1 conv)."""
    for layer in layers:
        if getattr(layer, "writes_any_layout", False) and callable(getattr(layer, "runs_in", None)):
            return None
        wanted = _layout_of(layer)
        if wanted != "any" and not (runs_in(layer, "source") and runs_in(layer, "channels_last")):
            return wanted
    return final


class Sequential(TorchLayer):
    """torch.nn.Sequential: children keyed "0", "1", ... (or by OrderedDict names), layouts converted between them.

    `layout_in` says which layout the caller hands over; the output layout is `self.layout_out`, which the
    translator computes the same way statically.
    """

    def __init__(self, *layers, **kwargs):
        super().__init__(**{k: v for k, v in kwargs.items() if k in ("name", "dtype", "trainable")})
        if len(layers) == 1 and isinstance(layers[0], dict):
            self.names, self.items = list(layers[0].keys()), list(layers[0].values())
        else:
            self.names, self.items = [str(i) for i in range(len(layers))], list(layers)
        self.finish_init()

    def __setattr__(self, name, value):
        """torch registers a module set as an attribute of a Sequential (`self.norm = nn.BatchNorm2d(...)` in a
        subclass's __init__) as its next child: so does the port."""
        super().__setattr__(name, value)
        if isinstance(value, keras.layers.Layer) and not name.startswith("_") and "names" in self.__dict__ and \
                name not in self.names:
            self.names.append(name)
            self.items.append(value)

    def __getattr__(self, name):
        """torch reaches a named child as an attribute (`self.heads.head` of a Sequential built from an
        OrderedDict)."""
        names = self.__dict__.get("names", ())
        if name in names:
            return self.__dict__["items"][names.index(name)]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def porter_layout(self):
        for layer in self.items:
            if _layout_of(layer) != "any":
                return _layout_of(layer)
        return "any"

    @property
    def layout_out(self):
        layout = "any"
        for layer in self.items:
            layout = getattr(layer, "layout_out", None) or (_layout_of(layer) if _layout_of(layer) != "any"
                                                              else layout)
        return layout

    def __call__(self, *args, **kwargs):
        """Called from outside any model (the model itself, as a factory returns it: d2lzh's `resnet18()` is an
        `nn.Sequential`), it takes and returns the source framework's layout like a generated class; inside one,
        the layouts the translator computed. A generated subclass (a class of the model module) keeps the layouts
        the translator gave its class, as every generated class does, unless it is the model itself (`porter_model`:
        a subclass without a forward, the model a factory returning `nn.Sequential(...)` builds)."""
        outermost = _OPEN_CALLS[0] == 0
        if outermost and kwargs.get("layout") is None and self.porter_layout != "any" and (
                type(self).__module__ == __name__ or getattr(type(self), "porter_model", False)):
            kwargs["layout"] = "source"
            kwargs["layout_out"] = kwargs.get("layout_out") or ("source" if self.layout_out != "any" else None)
        _OPEN_CALLS[0] += 1
        try:
            return super().__call__(*args, **kwargs)
        finally:
            _OPEN_CALLS[0] -= 1

    def call(self, x, training=None, layout=None, layout_out=None):
        """`layout`: the layout the caller holds `x` in, `layout_out` the one it wants the result in (a flexible
        layer's call, see `runs_in`); without them, `x` comes in `self.porter_layout` and leaves in
        `self.layout_out`, as the translator computed them."""
        current = layout or self.porter_layout
        final = layout_out or layout or self.layout_out
        for index, layer in enumerate(self.items):
            held = _stored_order(current)
            if held is not None and _runs_on_held(layer, held):
                x = call_held(layer, x, held)
                continue
            if runs_in(layer, current):
                after = _wanted_after(self.items[index + 1:], final)
                after = _free_layout(layer, current) if after is None else current if after == "any" else after
                if _stored_order(after) is not None:  # (a permuted order: reached by a conversion after it)
                    after = current
                x = layer(x, layout=current, layout_out=after)
                current = after
                continue
            x, current = _to_layout(x, current, _layout_of(layer))
            handed, x = x, layer(x)  # Keras passes `training` on to sublayers through its call context
            current = _layout_out_of(layer, handed) or (current if _layout_of(layer) == "any"
                                                        else _layout_of(layer))
        return _to_layout(x, current, final)[0]

    def runs_in(self, layout):
        """A Sequential converts between its layers itself: it takes what its caller holds (not a subclass with a
        forward of its own)."""
        return type(self).call is Sequential.call

    @property
    def _modules(self):
        """torch's name -> child dict (`for module in self._modules.values()` in a Sequential subclass)."""
        return dict(zip(self.names, self.items))

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Sequential(dict(zip(self.names[index], self.items[index])))
        return self.items[index]

    def __setitem__(self, index, layer):
        """`model.classifier[1] = nn.Linear(...)`: the child replaced under its name (its weights with it)."""
        replace_item(self.items, index, layer)

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def append(self, layer):
        self.names.append(str(len(self.items)))
        self.items.append(layer)
        return self

    def add_module(self, name, module):
        self.names.append(str(name))
        self.items.append(module)

    def torch_state(self, prefix=""):
        entries = []
        for name, layer in zip(self.names, self.items):
            entries.extend(_child_state(layer, prefix + name + "."))
        return entries

    def modules(self):
        yield self
        for layer in self.items:
            yield from (layer.modules() if hasattr(layer, "modules") else [layer])


def replace_item(items, index, layer):
    """items[index] = layer in a list Keras tracks: the old layer untracked (its weights leave the model), the new
    one tracked."""
    index = range(len(items))[index]
    del items[index]
    items.insert(index, layer)


def _child_state(layer, prefix):
    return collect_state(layer, prefix) if hasattr(layer, "torch_state") else []


class ModuleList(TorchLayer):
    """torch.nn.ModuleList: indexable, iterable, keys "0", "1", ..."""

    porter_layout = "any"

    def __init__(self, modules=None, **kwargs):
        super().__init__(**kwargs)
        self.items = list(modules or [])
        self.child_names = {}  # position -> name of a child added by `add_module(name, ...)` (torch's key)
        self.finish_init()

    def __getattr__(self, name):
        """A child `add_module` named is an attribute (`self.path.pad`), as in torch."""
        names = self.__dict__.get("child_names") or {}
        for index, child_name in names.items():
            if child_name == name:
                return self.__dict__["items"][index]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ModuleList(self.items[index])
        return self.items[index]

    def __setitem__(self, index, module):
        replace_item(self.items, index, module)

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def append(self, module):
        self.items.append(module)
        return self

    def __iadd__(self, modules):
        """`self.layers += [block, ...]` extends the list, as in torch."""
        self.extend(modules)
        return self

    def extend(self, modules):
        self.items.extend(modules)
        return self

    def insert(self, index, module):
        self.items.insert(index, module)

    def add_module(self, name, module):
        if str(name) != str(len(self.items)):
            self.child_names[len(self.items)] = str(name)
        self.items.append(module)

    def torch_state(self, prefix=""):
        entries = []
        for index, layer in enumerate(self.items):
            entries.extend(_child_state(layer, f"{prefix}{self.child_names.get(index, index)}."))
        return entries

    def modules(self):
        yield self
        for layer in self.items:
            yield from (layer.modules() if hasattr(layer, "modules") else [layer])


class ModuleDict(TorchLayer):
    """torch.nn.ModuleDict: insertion-ordered, keys are the torch names."""

    porter_layout = "any"

    def __init__(self, modules=None, **kwargs):
        super().__init__(**kwargs)
        modules = dict(modules or {})
        self.keys_ = list(modules.keys())
        self.items_ = list(modules.values())
        self.finish_init()

    def __getitem__(self, key):
        return self.items_[self.keys_.index(key)]

    def __getattr__(self, name):
        keys = self.__dict__.get("keys_")  # torch exposes children as attributes: self.transformer.wte
        if keys is not None and name in keys:
            return self.__dict__["items_"][list(keys).index(name)]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def __setitem__(self, key, module):
        if key in self.keys_:
            self.items_[self.keys_.index(key)] = module
        else:
            self.keys_.append(key)
            self.items_.append(module)

    def __contains__(self, key):
        return key in self.keys_

    def add_module(self, name, module):
        self[name] = module

    def update(self, modules):
        for key, module in dict(modules).items():
            self[key] = module

    def __len__(self):
        return len(self.keys_)

    def __iter__(self):
        return iter(self.keys_)

    def keys(self):
        return list(self.keys_)

    def values(self):
        return list(self.items_)

    def items(self):
        return list(zip(self.keys_, self.items_))

    def torch_state(self, prefix=""):
        entries = []
        for key, layer in zip(self.keys_, self.items_):
            entries.extend(_child_state(layer, f"{prefix}{key}."))
        return entries

    def modules(self):
        yield self
        for layer in self.items_:
            yield from (layer.modules() if hasattr(layer, "modules") else [layer])


class ParameterList(TorchLayer):
    """torch.nn.ParameterList of variables, keys "0", "1", ..."""

    def __init__(self, values=None, **kwargs):
        super().__init__(**kwargs)
        self.items = [self.add_weight(shape=np.shape(v), initializer=keras.initializers.Constant(np.asarray(v)),
                                      name=f"p{i}") for i, v in enumerate(values or [])]
        self.finish_init()

    def __getitem__(self, index):
        return self.items[index]

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def torch_state(self, prefix=""):
        return [StateEntry(f"{prefix}{i}", v) for i, v in enumerate(self.items)]


def in_place_head(sequential, x):
    """What torch leaves in the tensor `x` handed to `sequential` (a Sequential built from a list, `nn.Sequential(
    *rep)`): its first layer's result where that layer is an activation built with `inplace=True` (which overwrites
    its input in torch), else `x` as it was."""
    items = getattr(sequential, "items", None) or ()
    first = items[0] if items else None
    if first is not None and getattr(first, "_activation_config", {}).get("inplace"):
        return first(x)
    return x


def call_held(layer, x, held):
    """`layer(x)` for a tensor whose axes hold torch's dims in the order `held` (tokens held batch-first for a
    sequence-first model): a layer that computes along trailing dims is told the order (LayerNorm:
    `takes_held_order`), an elementwise one (Identity, an activation: the other alternative of an if/else) or one
    along the last dim where the last axis holds it (Linear) takes it as it lies (`_runs_on_held`), any other gets
    torch's order and hands its result back in `held`."""
    if getattr(layer, "takes_held_order", False):
        return layer(x, held=held)
    if getattr(layer, "porter_layout", None) == "any" or _runs_on_held(layer, held):
        return layer(x)
    result = layer(tf.transpose(x, [held.index(d) for d in range(len(held))]))
    return tf.transpose(result, held)


def call_module(module, *args, held="source", **kwargs):
    """Call a module whose kind porter could not see statically, its first argument and its result in the layout
    the caller holds them (`held`: torch's by default; "channels_last" for an image the caller keeps so): a
    module of that layout (one of two channels-last blocks an if/else chose) runs without a conversion."""
    variants = getattr(module, "held_variants", None)  # a function of the model translated for images held so
    variant = variants.get((held, len(args[0].shape))) if variants and isinstance(held, str) and args and hasattr(
        args[0], "shape") else None
    if variant is not None:
        return variant(*args, **{k: v for k, v in kwargs.items() if k != "training"})
    # (a layer's own method, `super(Patch, self).call` of a Sequential subclass whose children porter could not
    # follow: the layer's layout, and its training flag)
    owner = getattr(module, "__self__", None) if not isinstance(module, keras.layers.Layer) else module
    owner = owner if isinstance(owner, keras.layers.Layer) else module
    layout = getattr(owner, "porter_layout", "source")
    declared_out = _layout_out_of(owner, args[0] if args else None)
    if "training" in kwargs and (not isinstance(owner, keras.layers.Layer) or
                                 not getattr(owner, "_call_has_training_arg", True)):
        kwargs.pop("training")  # a plain callable (a lambda stored as an attribute) or a layer that takes none
    if args and isinstance(args[0], (list, tuple)):
        return _call_on_items(module, layout, args, kwargs, held if held in ("channels_last", "source") else "source")
    if isinstance(held, list):  # a tensor whose axes hold torch's dims in this order (a permute not yet made)
        if layout == "any" and declared_out is None:
            return _inner_call(module, args, kwargs)  # elementwise: as it lies
        source = tf.transpose(args[0], [held.index(d) for d in range(len(held))])
        result = call_module(module, source, *args[1:], **kwargs)
        return tf.transpose(result, held) if len(getattr(result, "shape", ())) == len(held) else result
    if args and _stored_order(layout) is not None and hasattr(args[0], "shape"):  # a block translated for a
        # tensor held permuted (tokens held batch-first for a sequence-first block): handed over so, and back
        result = _inner_call(module, (_to_layout(args[0], held, layout)[0],) + tuple(args[1:]), kwargs)
        out = declared_out or layout
        return _to_layout(result, out, held)[0] if hasattr(result, "shape") else result
    if args and layout in ("channels_last", "source") and layout != held and runs_in(module, held):
        return _inner_call(module, args, dict(kwargs, layout=held, layout_out=held))  # it computes on the layout
    if args and layout in ("channels_last", "source") and layout != held:
        args = ((to_channels_last if layout == "channels_last" else to_channels_first)(args[0]),) + tuple(args[1:])
    result = _inner_call(module, args, kwargs)
    layout_out = declared_out or (layout if layout != "any" else held)
    if layout_out in ("channels_last", "source") and layout_out != held and hasattr(result, "shape"):
        result = (to_channels_last if held == "channels_last" else to_channels_first)(result)
    elif _stored_order(layout_out) is not None and hasattr(result, "shape"):  # (returned before a permute)
        return _to_layout(result, layout_out, held)[0]
    return _items_in_layout(result, layout_out, held)


def _call_on_items(module, layout, args, kwargs, held="source"):
    """`call_module` handed a list or tuple of images (HRNet's branches, SelecSLS's (features, skip) pairs chained by
    a Sequential subclass's loop): its images are in the layout `held` (torch's, as every list a caller could not
    type is, unless the caller holds them channels-last); converted item by item for a module taking another
    layout, and what the module returns comes back in `held`."""
    items = _to_layout(args[0], held, layout)[0] if layout in ("channels_last", "source") else args[0]
    result = _inner_call(module, (items,) + tuple(args[1:]), kwargs)
    layout_out = getattr(module, "layout_out", None) or (layout if layout != "any" else held)
    return _to_layout(result, layout_out, held)[0] if layout_out in ("channels_last", "source") else result


def call_in_constructor(module, *args, **kwargs):
    """`module(*args, **kwargs)` in a constructor, its tensors in the layouts the translation handed (a block laid
    out channels-last run on `torch.zeros(1, 3, H, W)` converted already, to size a layer by its output): as a call
    inside the model, so no model call being open, the block does not convert at its boundary again."""
    return _inner_call(module, args, kwargs)


def _inner_call(module, args, kwargs):
    """`module(*args, **kwargs)` as a call inside the model: a block laid out channels-last does not take it for a
    model's own call and convert at its boundary again (`self.sequence_length()` in `__init__` calls the block on a
    torch-layout tensor this function has converted already)."""
    _OPEN_CALLS[0] += 1
    try:
        return module(*args, **kwargs)
    finally:
        _OPEN_CALLS[0] -= 1


def _items_in_layout(result, layout, held):
    """A tuple a module returned (a block's `(x, x_prev)`, HRNet's branches) or a dict of its features with its
    images in `layout`, moved
    into the layout `held` the caller holds its tensors in: a caller that could not see the module unpacks it into
    values it takes so."""
    if isinstance(result, (tuple, list)) and layout in ("channels_last", "source") and held in ("channels_last",
                                                                                              "source"):
        return _to_layout(result, layout, held)[0]
    if isinstance(result, dict) and layout in ("channels_last", "source") and held in ("channels_last", "source"):
        # (the features a block returned by name: torchvision's IntermediateLayerGetter)
        return type(result)((key, _to_layout(item, layout, held)[0]) for key, item in result.items())
    return result


def then(first, second):
    """A load-time transform running `first` (None: none), then `second`."""
    return second if first is None else lambda array: second(first(array))


def last_channels(sequential):
    """Channel count a Sequential of conv/norm/pool layers ends with (for load-time weight permutation); a
    Sequential inside it (a VAE encoder's conv-norm-activation blocks) is read through."""
    channels = None
    for layer in sequential:
        for attribute in ("out_channels", "num_features", "num_channels"):
            if hasattr(layer, attribute):
                channels = getattr(layer, attribute)
                break
        else:
            if isinstance(layer, Sequential):
                channels = last_channels(layer) or channels
    return channels
