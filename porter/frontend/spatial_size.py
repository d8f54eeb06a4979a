"""The input size a convnet's forward implies, read statically when no example input is known: the spatial size
whose path through the forward's convolutions, pools and flatten reaches the first Linear with exactly its
`in_features` (a tutorial CIFAR net's `Linear(16 * 5 * 5, 120)` after two 5x5 convs and 2x2 pools: 32x32).

The forward is simulated, not run: straight-line code on its first argument, layers built in `__init__` (also
inside `nn.Sequential`) and the functional ops that keep or pool the size. Anything else (control flow, an
in-file block, an unknown op on the way) means "unknown", and porter asks for --input-shape as before. After an
adaptive pool every size fits: then the first conventional size that does is taken.
"""

import libcst as cst

from porter.frontend.arguments import bound_argument
from porter.frontend.first_layer import (
    _constructed_attribute,
    _first_child,
    _init_bindings,
    _int_of,
    _returned_call,
    builder_ints,
    forward_signature,
)
from porter.frontend.imports import dotted_name

NN, F = "torch.nn.", "torch.nn.functional."
SIZE_KEEPING_LAYERS = {NN + name for name in (
    "ReLU", "ReLU6", "LeakyReLU", "PReLU", "GELU", "SiLU", "Sigmoid", "Tanh", "ELU", "SELU", "CELU", "Hardswish",
    "Hardsigmoid", "Mish", "Softplus", "Identity", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "BatchNorm1d",
    "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "GroupNorm",
    "LocalResponseNorm", "AlphaDropout")}
SIZE_KEEPING_FUNCTIONS = {F + name for name in (
    "relu", "relu6", "leaky_relu", "gelu", "silu", "sigmoid", "tanh", "elu", "selu", "hardswish", "mish",
    "dropout", "dropout1d", "dropout2d", "dropout3d", "local_response_norm")} | {
    "torch.relu", "torch.sigmoid", "torch.tanh", "torch.dropout"}
SIZE_KEEPING_METHODS = {"relu", "sigmoid", "tanh", "contiguous", "float", "clone", "relu_", "sigmoid_", "tanh_"}
PREFERRED = (28, 32, 224, 64, 96, 128, 256, 299, 227, 48, 16, 40, 80, 112, 160, 192, 288, 320, 384, 512)
LARGEST = {1: 4096, 2: 600, 3: 96}  # sizes tried per number of spatial dims


class _Unknown(Exception):
    """The forward does something the simulation cannot follow."""


class _Mismatch(Exception):
    """This size cannot be the input's (a size below 1, or the Linear's features differ)."""


class _Reached(Exception):
    """The first Linear was reached with the features it expects."""


def solve_spatial_size(source, class_name, channels, spatial, init_args=None):
    """(size, reason) for a `channels`-channel input with `spatial` equal spatial dims, or None when unknown."""
    info = source.classes.get(class_name)
    signature = forward_signature(source, class_name)
    if info is None or signature is None or len(signature.names) != 1:
        return None
    forward = info.find_method("forward")
    simulator = _Simulator(source, info, _init_bindings(source, info, init_args or {}), signature.names[0])
    children = _first_child(info, everything=True) if forward is None else None  # (a Sequential subclass)
    if forward is None and children is None:
        return None
    fitting = []
    for size in range(1, LARGEST.get(spatial, 0) + 1):
        try:
            if forward is None:
                simulator.run_children(children, channels, [size] * spatial)
            simulator.run(forward, channels, [size] * spatial)
        except _Unknown:
            return None
        except _Mismatch:
            continue
        except _Reached:
            fitting.append(size)
    if not fitting:
        return None
    fits = set(fitting)
    size = next((s for s in PREFERRED if s in fits), None) or next((s for s in fitting if s % 8 == 0), fitting[0])
    largest = LARGEST[spatial]
    if len(fitting) > 32 and fitting[-1] == largest and fitting[-1] - fitting[0] == len(fitting) - 1:
        reason = "any size from there on fits (an adaptive pool)"
    else:
        reason = f"the sizes that reach {simulator.linear_text} exactly: {_size_ranges(fitting)}"
    return size, reason


def _size_ranges(sizes, shown=6):
    """`sizes` (ascending) as text, runs of consecutive sizes as ranges: "1984-2239" or "28, 32, 36, ..."."""
    runs = []
    for size in sizes:
        if runs and size == runs[-1][1] + 1:
            runs[-1][1] = size
        else:
            runs.append([size, size])
    text = [str(a) if a == b else f"{a}-{b}" for a, b in runs]
    return ", ".join(text[:shown]) + (", ..." if len(text) > shown else "")


class _Simulator:
    def __init__(self, source, info, bindings, argument):
        self.source, self.info, self.bindings, self.argument = source, info, bindings, argument
        self.linear_text = "the first Linear"

    def run(self, forward, channels, sizes):
        env = {self.argument: ("image", channels, list(sizes))}
        for statement in forward.body.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                raise _Unknown  # control flow: not followed
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                        isinstance(small.targets[0].target, cst.Name):
                    env[small.targets[0].target.value] = self.value(small.value, env)
                elif isinstance(small, (cst.Return, cst.Expr)) and small.value is not None:
                    self.value(small.value, env)
                elif not isinstance(small, cst.Pass):
                    raise _Unknown
        raise _Unknown  # returned without reaching a Linear

    def run_children(self, children, channels, sizes):
        """A Sequential subclass's children (the arguments of its `super().__init__(...)`) in turn."""
        state = ("image", channels, list(sizes))
        for child in children:
            state = self.layer(child, state)
        raise _Unknown

    # --- expressions -------------------------------------------------------------------------------------
    def value(self, node, env):
        """The shape state of `node`: ("image", channels, sizes) / ("flat", features), or None (not the input)."""
        if isinstance(node, cst.Name):
            return env.get(node.value)
        if not isinstance(node, cst.Call):
            if any(self.mentions_input(child, env) for child in _children(node)):
                raise _Unknown
            return None
        func = node.func
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if isinstance(func, cst.Attribute) and dotted_name(func.value) == "self":
            constructed = _constructed_attribute(self.info, func.attr.value)
            state = self.value(positional[0], env) if positional else None
            if state is None:
                return self.unrelated(node, env)
            if constructed is None:
                raise _Unknown
            return self.layer(constructed, state)
        canonical = self.source.imports.resolve(func)
        if canonical is not None:
            state = self.value(positional[0], env) if positional else None
            if state is None:
                return self.unrelated(node, env)
            return self.function(canonical, node, state)
        if isinstance(func, cst.Attribute):
            state = self.value(func.value, env)
            if state is None:
                return self.unrelated(node, env)
            return self.method(func.attr.value, node, state)
        raise _Unknown

    def unrelated(self, node, env):
        """None for an expression that does not read the input; unknown when it reads it in a way not followed."""
        if self.mentions_input(node, env):
            raise _Unknown
        return None

    def mentions_input(self, node, env):
        return isinstance(node, cst.Name) and node.value in env or any(
            self.mentions_input(child, env) for child in _children(node))

    # --- layers ------------------------------------------------------------------------------------------
    def layer(self, node, state):
        if not isinstance(node, cst.Call):
            raise _Unknown
        canonical = self.source.imports.resolve(node.func)
        if canonical == NN + "Sequential":
            for element in (a.value for a in node.args if a.keyword is None and not a.star):
                state = self.layer(element, state)
            return state
        if canonical in SIZE_KEEPING_LAYERS:
            return state
        builder = node.func.value if isinstance(node.func, cst.Name) else None
        returned = _returned_call(self.source.functions.get(builder)) if builder in self.source.functions else None
        if returned is not None:  # a builder of the file (`conv_bn(3, width)`): what it returns, its ints bound
            outer, self.bindings = self.bindings, builder_ints(self.source.functions[builder], node, self.bindings)
            try:
                return self.layer(returned, state)
            finally:
                self.bindings = outer
        name = canonical[len(NN):] if canonical and canonical.startswith(NN) else None
        if name is None:
            raise _Unknown
        if name.startswith("Conv") and name[-2:] in ("1d", "2d", "3d") and not name.startswith("ConvTranspose"):
            return self.conv(node, state)
        if name[:-2] in ("MaxPool", "AvgPool") and name[-2:] in ("1d", "2d", "3d"):
            return self.pool(node, state, 0, name.startswith("Max"))
        if name[:-2] in ("AdaptiveAvgPool", "AdaptiveMaxPool"):
            return self.adaptive(bound_argument(node, 0, "output_size"), state)
        if name == "Flatten":
            start = self.int_argument(node, 0, "start_dim", 1)
            return self.flatten(state, start)
        if name == "Linear":
            return self.linear(node, state)
        raise _Unknown

    def conv(self, node, state):
        kind, _, sizes = self.image(state)
        out_channels = self.int_argument(node, 1, "out_channels", None)
        kernel = self.ints(node, 2, "kernel_size", None, len(sizes))
        stride = self.ints(node, 3, "stride", 1, len(sizes))
        padding_node = bound_argument(node, 4, "padding")
        dilation = self.ints(node, 5, "dilation", 1, len(sizes))
        if out_channels is None or kernel is None:
            raise _Unknown
        if isinstance(padding_node, cst.SimpleString):
            if padding_node.evaluated_value != "same":
                padding = [0] * len(sizes)  # "valid"
            else:
                return (kind, out_channels, sizes)
        else:
            padding = self.ints(node, 4, "padding", 0, len(sizes))
        out = [(s + 2 * p - d * (k - 1) - 1) // st + 1 for s, p, d, k, st in zip(sizes, padding, dilation, kernel,
                                                                                   stride)]
        return self.checked((kind, out_channels, out))

    def pool(self, node, state, offset, is_max, functional=False):
        kind, channels, sizes = self.image(state)
        kernel = self.ints(node, offset, "kernel_size", None, len(sizes))
        stride = self.ints(node, offset + 1, "stride", None, len(sizes)) or kernel
        padding = self.ints(node, offset + 2, "padding", 0, len(sizes))
        dilation = self.ints(node, offset + 3, "dilation", 1, len(sizes)) if is_max else [1] * len(sizes)
        # ceil_mode's position: MaxPool2d(k, s, p, d, return_indices, ceil_mode); F.max_pool2d(x, k, s, p, d,
        # ceil_mode); AvgPool2d(k, s, p, ceil_mode) and F.avg_pool2d(x, k, s, p, ceil_mode)
        ceil_node = bound_argument(node, offset + ((4 if functional else 5) if is_max else 3), "ceil_mode")
        ceil = isinstance(ceil_node, cst.Name) and ceil_node.value == "True"
        if kernel is None:
            raise _Unknown
        out = []
        for s, k, st, p, d in zip(sizes, kernel, stride, padding, dilation):
            span = s + 2 * p - d * (k - 1) - 1
            size = (-(-span // st) if ceil else span // st) + 1
            if ceil and (size - 1) * st >= s + p:
                size -= 1
            out.append(size)
        return self.checked((kind, channels, out))

    def adaptive(self, output_node, state):
        kind, channels, sizes = self.image(state)
        if isinstance(output_node, (cst.Tuple, cst.List)):
            out = [_int_of(e.value, self.bindings) for e in output_node.elements]
        else:
            out = [_int_of(output_node, self.bindings)] * len(sizes)
        if any(o is None for o in out):
            raise _Unknown
        return self.checked((kind, channels, out))

    def flatten(self, state, start):
        if state[0] == "flat" or start != 1:
            raise _Unknown
        _, channels, sizes = state
        features = channels
        for size in sizes:
            features *= size
        return ("flat", features)

    def linear(self, node, state):
        in_features = self.int_argument(node, 0, "in_features", None)
        if in_features is None or state[0] != "flat":
            raise _Unknown
        self.linear_text = f"Linear({in_features})"
        raise _Reached if state[1] == in_features else _Mismatch

    # --- functions and methods ---------------------------------------------------------------------------
    def function(self, canonical, node, state):
        if canonical in SIZE_KEEPING_FUNCTIONS:
            return state
        name = canonical.rsplit(".", 1)[-1]
        if canonical.startswith(F) and name in ("max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d",
                                                "avg_pool2d", "avg_pool3d"):
            return self.pool(node, state, 1, name.startswith("max"), functional=True)
        if canonical.startswith(F) and name.startswith("adaptive_"):
            return self.adaptive(bound_argument(node, 1, "output_size"), state)
        if canonical == "torch.flatten":
            return self.flatten(state, self.int_argument(node, 1, "start_dim", 0))
        raise _Unknown

    def method(self, name, node, state):
        if name in SIZE_KEEPING_METHODS:
            return state
        if name == "flatten":
            return self.flatten(state, self.int_argument(node, 0, "start_dim", 0))
        if name in ("view", "reshape") and len(node.args) == 2:
            first, second = (a.value for a in node.args)
            if isinstance(second, cst.UnaryOperation) and _int_of(second.expression, {}) == 1:
                return self.flatten(state, 1)  # x.view(x.size(0), -1)
            features = _int_of(second, self.bindings)
            if isinstance(first, cst.UnaryOperation) and features is not None:  # x.view(-1, 16 * 5 * 5)
                flat = self.flatten(state, 1)
                if flat[1] != features:
                    raise _Mismatch
                return flat
        raise _Unknown

    # --- helpers -----------------------------------------------------------------------------------------
    def image(self, state):
        if state[0] != "image":
            raise _Unknown
        return state

    @staticmethod
    def checked(state):
        if any(size < 1 for size in state[2]):
            raise _Mismatch
        return state

    def int_argument(self, node, position, keyword, default):
        argument = bound_argument(node, position, keyword)
        if argument is None:
            return default
        value = _int_of(argument, self.bindings)
        if value is None:
            raise _Unknown
        return value

    def ints(self, node, position, keyword, default, count):
        argument = bound_argument(node, position, keyword)
        if argument is None:
            return None if default is None else [default] * count
        if isinstance(argument, (cst.Tuple, cst.List)):
            values = [_int_of(e.value, self.bindings) for e in argument.elements]
            if len(values) != count or any(v is None for v in values):
                raise _Unknown
            return values
        value = _int_of(argument, self.bindings)
        if value is None:
            raise _Unknown
        return [value] * count


def _children(node):
    return [child for child in node.children if isinstance(child, cst.CSTNode)]
