"""TPU lint: layer sizes that waste the MXU (feature, channel and hidden sizes that are not multiples of 128).

Sizes are read from the layer constructors (`nn.Linear(512, 200)`), through the constructor's defaults when the
size is a parameter (`def __init__(self, hidden=200)`) that no construction in the file overrides, through
--init-args for the main class, and through module-level integer constants. Only the sizes a layer produces are
read (out_features, out_channels, embedding_dim, hidden_size, d_model, dim_feedforward): an input size is the
previous layer's output or the data's, and is reported there if at all.
"""

import functools

import libcst as cst

from porter.passes.tpu_lint_kinds import FEATURE_ALIGNMENT, MIN_FLAGGED_FEATURES, MIN_FLAGGED_WASTE, round_up

CONVOLUTIONS = [f"torch.nn.Conv{d}d" for d in (1, 2, 3)] + [f"torch.nn.ConvTranspose{d}d" for d in (1, 2, 3)]
RECURRENT = ["torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNN", "torch.nn.LSTMCell", "torch.nn.GRUCell",
             "torch.nn.RNNCell"]
# layer -> [(position, keyword)] of the sizes it produces
PRODUCED_SIZES = {
    "torch.nn.Linear": [(1, "out_features")],
    "torch.nn.Embedding": [(1, "embedding_dim")],
    "torch.nn.EmbeddingBag": [(1, "embedding_dim")],
    "torch.nn.MultiheadAttention": [(0, "embed_dim")],
    "torch.nn.TransformerEncoderLayer": [(0, "d_model"), (2, "dim_feedforward")],
    "torch.nn.TransformerDecoderLayer": [(0, "d_model"), (2, "dim_feedforward")],
    **{name: [(1, "out_channels")] for name in CONVOLUTIONS},
    **{name: [(1, "hidden_size")] for name in RECURRENT},
}
OPERATORS = {cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
             cst.FloorDivide: lambda a, b: a // b}


def wasteful(size):
    """Whether padding `size` to the MXU's tile width wastes enough to report (see the kind's reason text)."""
    if size < MIN_FLAGGED_FEATURES or size % FEATURE_ALIGNMENT == 0:
        return False
    padded = round_up(size, FEATURE_ALIGNMENT)
    return (padded - size) / padded >= MIN_FLAGGED_WASTE


def lint_layer_sizes(info, source, init_args=None):
    """Findings (line, kind, message, suggestion) for the layers class `info` builds."""
    constants = module_constants(source.module)
    found, seen = [], set()
    for method_name, method in info.methods.items():
        environment = dict(constants)
        if method_name == "__init__":
            environment.update(constructor_defaults(method, info, source, init_args or {}))
        for call in _layer_calls(method, source):
            for line, message, suggestion in _sizes_of(call, environment, source, f"`{info.name}.{method_name}`"):
                if (line, message) not in seen:
                    seen.add((line, message))
                    found.append((line, "mxu-feature-size", message, suggestion))
    return found


def _layer_calls(function, source):
    return [call for call in source.nodes_in(function, cst.Call) if source.imports.resolve(call.func) in PRODUCED_SIZES]


def _sizes_of(call, environment, source, where):
    canonical = source.imports.resolve(call.func)
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    for position, keyword in PRODUCED_SIZES[canonical]:
        node = keywords.get(keyword, positional[position] if position < len(positional) else None)
        size, origin = resolve_int(node, environment) if node is not None else (None, None)
        if size is None or not wasteful(size):
            continue
        padded = round_up(size, FEATURE_ALIGNMENT)
        code = " ".join(source.code_of(call).split())
        code = code if len(code) <= 70 else code[:67] + "..."
        source_note = f" (the default of `{origin}`)" if origin else ""
        message = (f"`{code}` in {where}: {keyword} {size}{source_note} is padded to {padded} on the MXU, "
                   f"{(padded - size) / padded:.0%} of that dimension computed for nothing")
        suggestion = (f"use {keyword}={padded} when the size is a free choice (a width, a hidden size); a size the "
                      f"data fixes (classes, vocabulary) can stay: XLA pads it internally")
        yield source.line_of(call), message, suggestion


def resolve_int(node, environment):
    """(int, name of the parameter or constant it came from, or None) for a literal, a known name or simple
    arithmetic on them; (None, None) when the value is not known statically."""
    if isinstance(node, cst.Integer):
        return int(node.value, 0), None
    if isinstance(node, cst.Name) and node.value in environment:
        return environment[node.value], node.value
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in OPERATORS:
        left, left_origin = resolve_int(node.left, environment)
        right, right_origin = resolve_int(node.right, environment)
        if left is not None and right is not None:
            return OPERATORS[type(node.operator)](left, right), left_origin or right_origin
    return None, None


@functools.lru_cache(maxsize=2)  # asked once per class of the module: a scan of the whole module each time
def module_constants(module):
    """Top-level `NAME = <int>` assignments bound once (a shared dict: not to be changed)."""
    values, counts = {}, {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        name = target.target.value
                        counts[name] = counts.get(name, 0) + 1
                        if isinstance(small.value, cst.Integer):
                            values[name] = int(small.value.value, 0)
    return {name: value for name, value in values.items() if counts[name] == 1}


def constructor_defaults(init, info, source, init_args):
    """Integer defaults of `__init__`'s parameters that hold for every construction the file shows (an argument
    passed anywhere for that parameter makes it unknown); --init-args of the main class override them."""
    params = [p for p in init.params.params][1:]
    defaults = {}
    for param in params:
        if param.default is not None and isinstance(param.default, cst.Integer):
            defaults[param.name.value] = int(param.default.value, 0)
    if not defaults:
        return {}
    names = [p.name.value for p in params]
    for call in _constructions(info, source):
        if any(arg.star for arg in call.args):
            return {name: value for name, value in init_args.items() if isinstance(value, int)}
        positional = sum(1 for arg in call.args if arg.keyword is None)
        passed = set(names[:positional]) | {arg.keyword.value for arg in call.args if arg.keyword is not None}
        for name in passed:
            defaults.pop(name, None)
    for name, value in init_args.items():
        defaults.pop(name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            defaults[name] = value
    return defaults


def _constructions(info, source):
    """Calls that build class `info` in the file: `Name(...)` (or an alias) and subclasses' `super().__init__(...)`."""
    names = {info.name} | {alias for alias, target in source.class_aliases.items() if target == info.name}
    calls = [call for name in sorted(names) for call in source.calls_named(name)]
    for other in source.classes.values():
        if info.name in other.bases:
            calls += [call for call in source.nodes_in(other.node, cst.Call)
                      if isinstance(call.func, cst.Attribute) and call.func.attr.value == "__init__"]
    return calls
