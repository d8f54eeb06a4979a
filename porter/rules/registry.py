"""The rule registry: every torch op porter maps, with its layout behaviour, in one place.

Two kinds of rules:
- `module_rule`: a torch.nn module class (`torch.nn.Conv2d`) -> a runtime Keras layer class that takes the same
  constructor arguments (`Conv2d` in porter/runtime). Construction is copied argument for argument.
- `function_rule`: a function or tensor method (`torch.nn.functional.relu`, `torch.relu`, `Tensor.relu`) -> a
  runtime function with torch's signature, or a custom `translate(ctx, call)` for ops whose code depends on
  layout (axis arguments, view, cat ...). `ctx` is a RuleContext (porter/rules/context.py): the operations a rule
  may use, never the translator itself.

Layout, per rule:
- "channels_last": the first tensor argument is converted to channels-last; the result is channels-last with rank
  `rank` (None: the input's rank).
- "source": tensors are converted back to torch's order first; the result is in torch's order.
- "any": elementwise, runs on whatever layout arrives; parameters named in `axis_params` are remapped when the
  input is channels-last (the translator falls back to "source" when they are not literal).
"""

import ast
from dataclasses import dataclass, field

from porter.ir.values import NARROW_INTS

LAYOUTS = ("channels_last", "source", "any")


@dataclass(frozen=True)
class Signature:
    """A parsed torch signature: parameter names in order, defaults as source text, *args/**kwargs names."""

    params: tuple
    defaults: dict
    vararg: str | None = None
    kwonly: tuple = ()

    @classmethod
    def parse(cls, text):
        function = ast.parse(f"def f{text}: pass").body[0]
        arguments = function.args
        positional = [a.arg for a in arguments.posonlyargs + arguments.args]
        defaults = {}
        for name, default in zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults):
            defaults[name] = ast.unparse(default)
        kwonly = tuple(a.arg for a in arguments.kwonlyargs)
        for name, default in zip(kwonly, arguments.kw_defaults):
            if default is not None:
                defaults[name] = ast.unparse(default)
        vararg = arguments.vararg.arg if arguments.vararg else None
        return cls(tuple(positional), defaults, vararg, kwonly)


@dataclass(frozen=True)
class ModuleRule:
    names: tuple
    runtime: str
    layout: str
    rank: int | None = None
    training: bool = False
    outputs: str = "tensor"  # "tensor" or "tuple" (RNNs, attention): tuple items are in torch's order;
    # "tensor_or_tuple": a tensor when called with one argument, a tuple with more (Gluon's RNNs given states)
    family: str = ""
    rank_delta: object = 0  # output rank - input rank when `rank` is None; "unknown" when it varies
    # callable(positional, keywords) -> ModuleRule: the rule one construction uses, from its arguments' source text
    # (`nn.LayerNorm(axis=1)` on images runs channels-last, `nn.LayerNorm()` in torch's order); None: always this one
    variant: object = None
    # the layer acts on each spatial axis alone (max/avg pools): it runs on a channels-last tensor whose spatial
    # axes are stored in another order, told that order (`axis_order=`), so a channel axis made a pooling axis
    # (`x.unsqueeze(1)` pooled across channels) is pooled where it lies
    spatial_order_free: bool = False
    # the output's channel count: the name of the layer attribute holding it ("out_channels" for a conv,
    # "num_features" for a batch norm), KEEPS_CHANNELS (a pool, a pad: what came in), or None (unknown). A flatten
    # of a channels-last tensor whose channel count is known stays a reshape (porter/passes/channels.py)
    channels: str | None = None
    # the layer also computes on a channels-last tensor of rank > 2 as it lies, keeping that layout
    # (`layer(x, layout="channels_last")`): a Linear contracts torch's last dim where channels-last stores it
    runs_channels_last: bool = False
    # the layer maps each input element to a vector on a new last axis (Embedding): it takes a permuted input as it
    # lies, its result stored in the input's order with the new axis last
    gathers: bool = False
    # a sequence-first layer (torch's (L, N, E) unless batch_first) that also takes its input held with the first two
    # axes swapped (`layer(x, swapped=True)`, the result held so): `src.transpose(0, 1)` before it moves no data
    swaps_batch_axis: bool = False
    # what a tuple-output layer's items are, where known: "input" (a tensor of its first argument's rank: an RNN's
    # output sequence, attention's output), "tensor" (of rank unknown here), "tuple" (a tuple of unknown items),
    # "state" (a recurrent layer's h_n: the input's rank, (D * num_layers, N, H)), "states" (an LSTM's (h_n, c_n)),
    # "image" (the input's rank, in the layer's layout: a max pool's values and indices); None: no item known. `layer(x)[0]` then has a rank the ops after it can use
    items: tuple | None = None
    # the layer computes along torch's last axis only, every other position alike (Linear): it takes a permuted
    # tensor whose last axis is stored last as it lies (`out.permute(1, 0, 2)` of an RNN's swapped output), the
    # result held in that order
    last_axis_only: bool = False
    # the layer computes along torch's trailing dims (LayerNorm): told the stored order of a permuted tensor
    # (`layer(x, held=[1, 0, 2])`), it computes where they lie when they are stored last, else in torch's order;
    # the result held as the input is
    takes_held_order: bool = False
    # the layer's leading call parameters by name, where callers hand them by keyword (`attn(query=x, key=x,
    # value=x)`): bound to positions before the layout rules read them
    params: tuple = ()
    # the layer also takes torch's unbatched input (one dim fewer than `rank`: (C, H, W) for a 2d pad, RWKV's time
    # shift `nn.ZeroPad2d((0, 0, 1, -1))` on a (B, T, C) sequence) in torch's order, and returns it so
    unbatched_in_order: bool = False
    # the layer merges every dim after the batch into one (`nn.Flatten()`): on a channels-last image it may flatten
    # the image as it lies, (H, W, C), for a Linear after it whose weight columns are permuted at load time
    flattens_trailing: bool = False
    # the layer splits a (N, F) matrix into an image of this rank, (N, C, H, W...) (`nn.Unflatten(1, (C, H, W))`: 4):
    # after a Linear whose weight rows are permuted at load time it may give the image channels-last straight away;
    # 0: no such split
    splits_to_image: int = 0
    # how many leading call arguments are tensors the layer takes in its layout (MaxUnpool2d's input and the indices
    # its MaxPool2d gave, held alike); later ones go in torch's order
    image_args: int = 1


KEEPS_CHANNELS = "kept"
ITEM_KINDS = frozenset({"input", "tensor", "tuple", "state", "states", "image"})


@dataclass(frozen=True)
class FunctionRule:
    names: tuple
    runtime: str | None
    signature: Signature | None
    layout: str
    rank: int | None = None
    axis_params: tuple = ()
    training_param: str | None = None
    translate: object = None  # callable(ctx: RuleContext, call) -> Value, for ops that need more than a runtime call
    outputs: str = "tensor"
    family: str = ""
    extra: dict = field(default_factory=dict)


MODULE_RULES: dict = {}
FUNCTION_RULES: dict = {}


def _family():
    """The rule file (its stem) whose registration is running: the first caller outside this module."""
    import sys

    frame = sys._getframe(1)
    while frame.f_code.co_filename == __file__:
        frame = frame.f_back
    return frame.f_code.co_filename.rsplit("/", 1)[-1].removesuffix(".py")


def module_rule(*names, runtime, layout, rank=None, training=False, outputs="tensor", rank_delta=0, variant=None,
                spatial_order_free=False, channels=None, runs_channels_last=False, gathers=False,
                swaps_batch_axis=False, items=None, last_axis_only=False, takes_held_order=False, params=(),
                unbatched_in_order=False, flattens_trailing=False, splits_to_image=0, image_args=1):
    """Register a torch.nn module class (by every canonical name it has) -> runtime layer class `runtime`."""
    assert layout in LAYOUTS, layout
    assert items is None or outputs == "tuple" and set(items) <= ITEM_KINDS, items
    rule = ModuleRule(tuple(names), runtime, layout, rank, training, outputs, _family(), rank_delta, variant,
                      spatial_order_free, channels, runs_channels_last, gathers, swaps_batch_axis, items,
                      last_axis_only, takes_held_order, tuple(params), unbatched_in_order, flattens_trailing,
                      splits_to_image, image_args)
    for name in names:
        assert name not in MODULE_RULES, f"duplicate module rule {name}"
        MODULE_RULES[name] = rule
    return rule


def module_rule_for_call(rule, node):
    """The rule the construction `node` (a libcst Call) uses: `rule`, or the variant its arguments pick."""
    if rule.variant is None:
        return rule
    import libcst as cst

    text = cst.Module([]).code_for_node
    positional = [text(a.value) for a in node.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: text(a.value) for a in node.args if a.keyword is not None}
    return rule.variant(positional, keywords)


def function_rule(*names, runtime=None, signature=None, layout="any", rank=None, axis_params=(),
                  training_param=None, translate=None, outputs="tensor", **extra):
    """Register a function/tensor method (canonical names: `torch.x`, `torch.nn.functional.x`, `Tensor.x`).

    `signature` is torch's parameter list as text, e.g. "(input, dim=None, dtype=None)"; the runtime function
    `runtime` takes the same parameters. `translate` replaces the default translation entirely.
    """
    assert layout in LAYOUTS, layout
    assert runtime or translate, "a function rule needs a runtime function or a translate callable"
    parsed = Signature.parse(signature) if signature else None
    rule = FunctionRule(tuple(names), runtime, parsed, layout, rank, tuple(axis_params), training_param, translate,
                        outputs, _family(), extra)
    for name in names:
        assert name not in FUNCTION_RULES, f"duplicate function rule {name}"
        FUNCTION_RULES[name] = rule
    return rule


def pointwise_rule(*names, **options):
    """`function_rule` for an op whose every output element depends only on the inputs' elements at the same
    position (broadcast): it names no axis and keeps its input's shape, so it runs on any layout, keeps the rank,
    and a `torch.autograd.Function` built only of such ops computes elementwise too."""
    return function_rule(*names, pointwise=True, **options)


def is_pointwise(rule):
    """True for a rule registered by `pointwise_rule` (or with `pointwise=True`)."""
    return rule is not None and bool(rule.extra.get("pointwise"))


def keeps_channels(rule):
    """True when a channels-last function's result has as many channels as its input (a pool, an interpolation,
    a channel dropout): registered with `keeps_channels=True`, or pointwise."""
    return rule is not None and bool(rule.extra.get("keeps_channels") or rule.extra.get("pointwise"))


def with_kept_dtype(rule, call, result):
    """`result` of translating `call` with `rule`, given the integer or bool dtype of its first operand when the rule
    is registered with `keeps_dtype=True` (it moves or copies elements: reshape, permute, repeat, where, clamp, ...)
    and its translation left the dtype open."""
    args = call.all_args()
    first = args[0] if args else None
    asked = call.kwargs.get("dtype")
    if asked is not None and asked.code in NARROW_INTS and result.is_tensor:  # `torch.zeros(n, dtype=torch.int32)`
        return result.but(dtype="int", int_width=asked.code)
    if asked is not None and asked.code == "tf.int64" and result.is_tensor and result.dtype is None:
        return result.but(dtype="int")  # `torch.zeros(b, dtype=torch.long)`: timesteps a float product promotes
    if rule is not None and rule.extra.get("keeps_dtype") and first is not None and \
            first.dtype in ("int", "bool", "complex") and result.is_tensor and result.dtype is None:
        return result.but(dtype=first.dtype, int_width=first.int_width)
    return result


def keeps_rank(rule):
    """True when the op's result has its first tensor argument's rank: a pointwise op, or one registered with
    `same_rank=True` (transpose, softmax, layer_norm, pad, ...)."""
    return rule is not None and bool(rule.extra.get("pointwise") or rule.extra.get("same_rank"))


def method_rule(method):
    """The rule of the tensor method `method` (`x.relu()`); an in-place method without a rule of its own
    (`x.add_(y)`, which porter translates by rebinding the name) has the rule of its out-of-place twin."""
    load_all_rules()
    rule = FUNCTION_RULES.get(f"Tensor.{method}")
    if rule is None and method.endswith("_") and not method.endswith("__"):
        rule = FUNCTION_RULES.get(f"Tensor.{method[:-1]}")
    return rule


def function_rule_named(canonical):
    """The rule registered for the canonical name `canonical` (`torch.nn.functional.relu`), or None."""
    load_all_rules()
    return FUNCTION_RULES.get(canonical)


_LOADED = []


def load_all_rules():
    """Import every rule module so that its registrations run (idempotent; the package folder is listed once per
    process: callers ask for the tables often)."""
    if not _LOADED:
        import importlib
        import pkgutil

        import porter.rules as package

        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
            if info.name != "registry":
                importlib.import_module(f"porter.rules.{info.name}")
        _LOADED.append(True)
    return MODULE_RULES, FUNCTION_RULES
