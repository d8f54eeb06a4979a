"""What a model class's forward asks of its inputs, read statically: how many tensor arguments it takes, and the
layer that first reads its first argument (`self.conv1(x)` with `self.conv1 = nn.Conv2d(3, 16, 3)`).

`--input-shape` is checked against both (a Conv2d(3, ...) needs rank-3 examples with 3 channels, a Linear(784)
a last size of 784, an Embedding integer tokens), and when no example input is known a first Linear or Embedding
gives one. Only literal sizes count (or constructor parameters whose value --init-args or a default gives);
anything else reads as unknown and is not checked.
"""

from dataclasses import dataclass

import libcst as cst

from porter.frontend.arguments import bound_argument
from porter.frontend.imports import dotted_name
from porter.frontend.walk import descendants, walk

# canonical torch name -> (kind, spatial dims, keyword of the size that the input must match)
LAYERS = {
    **{f"torch.nn.Conv{n}d": ("conv", n, "in_channels") for n in (1, 2, 3)},
    **{f"torch.nn.ConvTranspose{n}d": ("conv", n, "in_channels") for n in (1, 2, 3)},
    "torch.nn.Linear": ("linear", 0, "in_features"),
    "torch.nn.Embedding": ("embedding", 0, "num_embeddings"),
    "torch.nn.EmbeddingBag": ("embedding", 0, "num_embeddings"),
}
SEQUENTIAL = "torch.nn.Sequential"
MAX_DEPTH = 4  # in-file classes followed to their own first layer


@dataclass(frozen=True)
class FirstLayer:
    """The layer that first reads the forward's first argument."""

    kind: str  # "conv" | "linear" | "embedding"
    torch_name: str  # torch.nn.Conv2d
    line: int | None
    size: int | None  # in_channels / in_features / num_embeddings (None: not a literal)
    spatial: int = 0  # 1, 2, 3 for convolutions

    @property
    def short_name(self):
        return self.torch_name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class ForwardSignature:
    """The positional parameters of forward (self excluded)."""

    names: tuple
    required: int  # parameters without a default
    variadic: bool  # *args
    line: int | None

    def accepts(self, count):
        return count >= self.required and (self.variadic or count <= len(self.names))


def forward_signature(source, class_name):
    """ForwardSignature of `class_name.forward`, or None when the file does not define it."""
    info = source.classes.get(class_name)
    forward = info.find_method("forward") if info is not None else None
    if forward is None and info is not None and info.container_base == "sequential":
        return ForwardSignature(("input",), 1, False, source.line_of(info.node))  # (nn.Sequential's own forward)
    if forward is None:
        return None
    params = [p for p in (*forward.params.posonly_params, *forward.params.params) if p.name.value != "self"]
    required = sum(1 for p in params if p.default is None)
    variadic = isinstance(forward.params.star_arg, cst.Param)
    return ForwardSignature(tuple(p.name.value for p in params), required, variadic, source.line_of(forward))


def first_layer(source, class_name, init_args=None, depth=0):
    """FirstLayer of `class_name` (its forward passes its first argument straight to a known layer), or None."""
    info = source.classes.get(class_name)
    signature = forward_signature(source, class_name)
    if info is None or signature is None or not signature.names or depth > MAX_DEPTH:
        return None
    if info.find_method("forward") is None:  # a Sequential subclass: the first child its constructor hands on
        first = _first_child(info)
        return _layer_of(source, first, _init_bindings(source, info, init_args or {}), depth) if first else None
    call = _first_call_on(info.find_method("forward"), signature.names[0])
    if call is None or not isinstance(call.func, cst.Attribute) or dotted_name(call.func.value) != "self":
        return None
    constructed = _constructed_attribute(info, call.func.attr.value)
    if constructed is None:
        return None
    return _layer_of(source, constructed, _init_bindings(source, info, init_args or {}), depth)


def _layer_of(source, node, bindings, depth):
    if not isinstance(node, cst.Call):
        return None
    canonical = source.imports.resolve(node.func)
    if canonical == SEQUENTIAL:
        positional = [a for a in node.args if a.keyword is None]
        if not positional or positional[0].star:  # (`nn.Sequential(*conv(3, 8), ...)`: a list porter does not
            return None  # read here comes first)
        return _layer_of(source, positional[0].value, bindings, depth)
    if canonical in LAYERS:
        kind, spatial, keyword = LAYERS[canonical]
        size = _int_of(bound_argument(node, 0, keyword), bindings)
        return FirstLayer(kind, canonical, source.line_of(node), size, spatial)
    callee = dotted_name(node.func)
    if callee in source.classes:
        inner = source.classes[callee]
        init = inner.find_method("__init__")
        passed = {}
        if init is not None:
            names = [p.name.value for p in init.params.params if p.name.value != "self"]
            for position, arg in enumerate(a for a in node.args if a.keyword is None):
                if arg.star:
                    break  # (what a starred list hands on is not read: the later positions are unknown)
                if position < len(names):
                    passed[names[position]] = _int_of(arg.value, bindings)
            for arg in node.args:
                if arg.keyword is not None:
                    passed[arg.keyword.value] = _int_of(arg.value, bindings)
        return first_layer(source, callee, {k: v for k, v in passed.items() if v is not None}, depth + 1)
    returned = _returned_call(source.functions.get(callee)) if callee in source.functions else None
    if returned is not None and depth < MAX_DEPTH:  # a builder of the file (`conv_bn(3, width)`): what it returns,
        return _layer_of(source, returned, builder_ints(source.functions[callee], node, bindings), depth + 1)
    return None


def builder_ints(function, call, bindings):
    """{parameter: int} of file function `function` as `call` hands them (ints read through `bindings`), its literal
    defaults where the call leaves them out."""
    params = function.params.params
    handed = {p.name.value: p.default for p in params if p.default is not None}
    handed.update((p.name.value, arg.value) for p, arg in zip(params, call.args) if arg.keyword is None and
                  not arg.star)
    handed.update((arg.keyword.value, arg.value) for arg in call.args if arg.keyword is not None)
    ints = {name: _int_of(value, bindings) for name, value in handed.items()}
    return {name: value for name, value in ints.items() if value is not None}


def _first_child(info, everything=False):
    """The first child a Sequential subclass's constructor hands to `super().__init__(...)`, or None; `everything`:
    the list of them all (None where one is starred)."""
    init = info.find_method("__init__")
    for node in descendants(init.body) if init is not None else ():
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == \
                "__init__" and isinstance(node.func.value, cst.Call) and dotted_name(node.func.value.func) == "super":
            positional = [a for a in node.args if a.keyword is None]
            if everything:
                return None if any(a.star for a in positional) else [a.value for a in positional]
            return positional[0].value if positional and not positional[0].star else None
    return None


def _returned_call(function):
    """The call a function's last statement returns (`return nn.Sequential(...)`), or None."""
    if not isinstance(function, cst.FunctionDef) or not isinstance(function.body, cst.IndentedBlock):
        return None
    last = function.body.body[-1] if function.body.body else None
    small = last.body[0] if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 else None
    return small.value if isinstance(small, cst.Return) and isinstance(small.value, cst.Call) else None


def _first_call_on(forward, name):
    """The call that first reads `name` as its first positional argument, when that is the first read of it."""
    found = []

    class Visitor(cst.CSTVisitor):
        def __init__(self):
            self.calls = []

        def visit_Call(self, node):
            self.calls.append(node)

        def leave_Call(self, node):
            self.calls.pop()

        def visit_Assign(self, node):
            walk(node.value, self)  # `x = self.conv(x)` reads x before it rebinds it
            return False

        def visit_Attribute(self, node):
            walk(node.value, self)  # `self.x` names an attribute, not the argument x
            return False

        def visit_Name(self, node):
            if node.value != name or found:
                return
            call = self.calls[-1] if self.calls else None
            first = [a for a in call.args if a.keyword is None] if call is not None else []
            found.append(call if first and first[0].value is node and not first[0].star else None)

    walk(forward.body, Visitor())
    return found[0] if found else None


def _constructed_attribute(info, attribute):
    """The expression assigned once to `self.<attribute>` in __init__ (None when absent or reassigned)."""
    values = _init_assignments(info).get(attribute, ())
    return values[0] if len(values) == 1 else None


def _init_assignments(info):
    """{attribute: [expressions assigned to `self.<attribute>` in __init__]}, found by one read-only walk and kept
    on `info` (the spatial-size search asks again for every size it tries: thousands of times for a 1-d input)."""
    cached = info.__dict__.get("_init_assignments")
    if cached is not None:
        return cached
    owner = info.owner_of("__init__")
    assigned = info.__dict__["_init_assignments"] = {}
    if owner is None:
        return assigned

    class Visitor(cst.CSTVisitor):
        def visit_Assign(self, node):
            for target in node.targets:
                if isinstance(target.target, cst.Attribute) and dotted_name(target.target.value) == "self":
                    assigned.setdefault(target.target.attr.value, []).append(node.value)

    walk(owner.methods["__init__"], Visitor())
    return assigned


def _init_bindings(source, info, init_args):
    """Constructor parameters with an integer value: --init-args first, else a literal default."""
    init = info.find_method("__init__")
    bindings = {}
    if init is not None:
        for param in (*init.params.params, *init.params.kwonly_params):
            if param.default is not None:
                value = _int_of(param.default, {})
                if value is not None:
                    bindings[param.name.value] = value
    bindings.update({k: v for k, v in init_args.items() if isinstance(v, int) and not isinstance(v, bool)})
    return bindings


def _int_of(node, bindings):
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.Name):
        return bindings.get(node.value)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Add)):
        left, right = _int_of(node.left, bindings), _int_of(node.right, bindings)
        if left is None or right is None:
            return None
        return left * right if isinstance(node.operator, cst.Multiply) else left + right
    return None


def check_input_specs(source, class_name, examples, specs, init_args=None):
    """UsageError when the --input-shape examples cannot be the inputs of `class_name`: another count than
    forward's tensor arguments, or a rank, size or dtype its first layer rejects."""
    from porter.errors import UsageError

    signature = forward_signature(source, class_name)
    if signature is not None and not signature.accepts(len(examples)):
        takes = f"{signature.required}" if signature.required == len(signature.names) else \
            f"{signature.required} to {len(signature.names)}"
        raise UsageError(f"--input-shape given {len(examples)} time{'s' * (len(examples) != 1)}, but "
                         f"{class_name}.forward takes {takes} tensor argument{'s' * (len(signature.names) != 1)} "
                         f"({', '.join(signature.names) or 'none'})", source.display_path, signature.line,
                         hint="pass one --input-shape per forward argument, in order")
    layer = first_layer(source, class_name, init_args)
    if layer is None or not examples:
        return
    example, spec = examples[0], specs[0]
    problem, wanted = _mismatch(layer, example)
    if problem is not None:
        size = layer.size if layer.size is not None else "..."
        raise UsageError(f"--input-shape {spec!r}: {class_name}'s first layer {layer.short_name}({size}, ...) "
                         f"{problem}", source.display_path, layer.line, hint=f"e.g. --input-shape {wanted}")


def _mismatch(layer, example):
    """(what is wrong, a spec that fits) or (None, None)."""
    shape, integer = list(example.shape), example.dtype.startswith("int")
    if layer.kind == "conv":
        rank = layer.spatial + 1
        fitting = [layer.size or (shape[0] if shape else 1)] + (shape[1:] if len(shape) == rank else [32] * (rank - 1))
        wanted = ",".join(map(str, fitting))
        axes = ", ".join(["channels", *("length", "height, width", "depth, height, width")[layer.spatial - 1:][:1]])
        if len(shape) != rank:
            return f"takes ({axes}) per example (rank {rank}, batch excluded), not rank {len(shape)}", wanted
        if layer.size is not None and shape[0] != layer.size:
            return f"takes {layer.size} channels (the first size), not {shape[0]}", wanted
        if integer or example.dtype == "bool":
            return f"takes floating-point inputs, not {example.dtype}", wanted
    elif layer.kind == "linear":
        wanted = ",".join(map(str, shape[:-1] + [layer.size or shape[-1]]))
        if layer.size is not None and shape[-1] != layer.size:
            return f"takes {layer.size} features (the last size), not {shape[-1]}", wanted
        if integer or example.dtype == "bool":
            return f"takes floating-point inputs, not {example.dtype}", wanted
    elif layer.kind == "embedding":
        high = layer.size if layer.size is not None else "N"
        wanted = f"{','.join(map(str, shape))}:int64:0:{high}"
        if not integer:
            return f"takes integer token ids, not {example.dtype}", wanted
        if example.low is not None and example.low < 0:
            return f"takes token ids from 0, not {example.low}", wanted
        if layer.size is not None and example.high is not None and example.high > layer.size:
            return f"has {layer.size} rows: token ids must stay below {layer.size} (high {example.high})", wanted
    return None, None
