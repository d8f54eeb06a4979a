"""torch losses (modules and functional forms) -> train_support losses, and where the classes sit in y_pred.

| torch | train_support | notes |
|---|---|---|
| CrossEntropyLoss / F.cross_entropy (weight, ignore_index, reduction, label_smoothing) | CrossEntropyLoss | |
|   (the mean divides by the summed weights of the kept targets, as torch's does) | | |
| NLLLoss / F.nll_loss on log-probabilities | NLLLoss | |
| BCEWithLogitsLoss / F.binary_cross_entropy_with_logits (weight, pos_weight) | BCEWithLogitsLoss | |
| BCELoss / F.binary_cross_entropy | BCELoss | log clamped at -100 |
| MSELoss, L1Loss / F.mse_loss, F.l1_loss | MSELoss, L1Loss | |
| SmoothL1Loss(beta) / HuberLoss(delta) | SmoothL1Loss, HuberLoss | Huber = delta * SmoothL1(beta=delta) |
"""

import libcst as cst

from porter.training.plan import LossPlan, Setting
from porter.training.values import keyword_args, positional_args

# canonical name -> (train_support name, positional parameter names, defaults, target kind)
_CE = (["weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing"],
       {"weight": None, "ignore_index": -100, "reduction": "mean", "label_smoothing": 0.0})
_NLL = (["weight", "size_average", "ignore_index", "reduce", "reduction"],
        {"weight": None, "ignore_index": -100, "reduction": "mean"})
_BCEL = (["weight", "size_average", "reduce", "reduction", "pos_weight"],
         {"weight": None, "reduction": "mean", "pos_weight": None})
_BCE = (["weight", "size_average", "reduce", "reduction"], {"weight": None, "reduction": "mean"})
_PLAIN = (["size_average", "reduce", "reduction"], {"reduction": "mean"})
_SMOOTH = (["size_average", "reduce", "reduction", "beta"], {"reduction": "mean", "beta": 1.0})
_HUBER = (["reduction", "delta"], {"reduction": "mean", "delta": 1.0})

MODULES = {
    "torch.nn.CrossEntropyLoss": ("CrossEntropyLoss", *_CE, "class"),
    "torch.nn.NLLLoss": ("NLLLoss", *_NLL, "class"),
    "torch.nn.BCEWithLogitsLoss": ("BCEWithLogitsLoss", *_BCEL, "binary_logits"),
    "torch.nn.BCELoss": ("BCELoss", *_BCE, "binary_probs"),
    "torch.nn.MSELoss": ("MSELoss", *_PLAIN, "regression"),
    "torch.nn.L1Loss": ("L1Loss", *_PLAIN, "regression"),
    "torch.nn.SmoothL1Loss": ("SmoothL1Loss", *_SMOOTH, "regression"),
    "torch.nn.HuberLoss": ("HuberLoss", *_HUBER, "regression"),
}
# functional forms take (input, target, <the module's arguments>)
FUNCTIONAL = {
    "torch.nn.functional.cross_entropy": "torch.nn.CrossEntropyLoss",
    "torch.nn.functional.nll_loss": "torch.nn.NLLLoss",
    "torch.nn.functional.binary_cross_entropy_with_logits": "torch.nn.BCEWithLogitsLoss",
    "torch.nn.functional.binary_cross_entropy": "torch.nn.BCELoss",
    "torch.nn.functional.mse_loss": "torch.nn.MSELoss",
    "torch.nn.functional.l1_loss": "torch.nn.L1Loss",
    "torch.nn.functional.smooth_l1_loss": "torch.nn.SmoothL1Loss",
    "torch.nn.functional.huber_loss": "torch.nn.HuberLoss",
}
FUNCTIONAL_ORDER = {
    "torch.nn.CrossEntropyLoss": ["weight", "size_average", "ignore_index", "reduce", "reduction",
                                  "label_smoothing"],
    "torch.nn.NLLLoss": ["weight", "size_average", "ignore_index", "reduce", "reduction"],
    "torch.nn.BCEWithLogitsLoss": ["weight", "size_average", "reduce", "reduction", "pos_weight"],
    "torch.nn.BCELoss": ["weight", "size_average", "reduce", "reduction"],
    "torch.nn.SmoothL1Loss": ["size_average", "reduce", "reduction", "beta"],
    "torch.nn.HuberLoss": ["reduction", "delta"],
}
TENSOR_ARGS = {"weight", "pos_weight"}
FLATTENING = {"view", "reshape", "flatten", "transpose", "permute", "contiguous"}


def loss_name(canonical):
    """The torch.nn loss class a canonical name (module or functional) stands for, or None."""
    if canonical in MODULES:
        return canonical
    return FUNCTIONAL.get(canonical)


def read_loss(canonical, call, scope, values, index, plan, functional):
    """LossPlan for `nn.XLoss(...)` (functional=False) or `F.x_loss(input, target, ...)` (functional=True)."""
    module = loss_name(canonical)
    cls, names, defaults, target = MODULES[module]
    line = index.line(call)
    positional = positional_args(call)
    if functional:
        positional = positional[2:]
        names = FUNCTIONAL_ORDER.get(module, names)
    given = dict(zip(names, positional))
    keywords = keyword_args(call)
    keywords.pop("input", None)
    keywords.pop("target", None)
    given.update(keywords)
    result = LossPlan(module, cls, [], line, index.source.code_of(call).strip(), target=target)
    for key, node in given.items():
        if key in ("size_average", "reduce"):
            plan.note(line, f"{module}: the deprecated {key}= is ignored (use reduction=)")
            continue
        if key not in defaults:
            plan.note(line, f"{module}: argument {key}= is not translated")
            continue
        source = node
        if key in TENSOR_ARGS:
            source = _tensor_literal(node, scope, values, index)
        value = values.translate(source, scope) if source is not None else None
        if value is None:
            plan.note(line, f"{module}: {key}={index.source.code_of(node).strip()} cannot be read statically; "
                            f"torch's default {defaults[key]!r} is used")
            continue
        if value.code == repr(defaults[key]) or (value.known and value.value == defaults[key]
                                                 and not value.refs and key != "reduction"):
            continue
        result.settings.append(Setting(key, value))
    reduction = result.setting("reduction")
    if reduction is not None and reduction.value == "none":
        plan.note(line, f"{module}(reduction='none'): train_tpu.py averages the per-element losses (mean)")
        result.settings = [s for s in result.settings if s.name != "reduction"]
    return result


def _tensor_literal(node, scope, values, index):
    """`torch.tensor([1.0, 2.0])` (or a name bound to it) -> the list node inside."""
    node, _ = values.resolve_object(node, scope)
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
            "to", "float", "cuda"):
        node = node.func.value
    if isinstance(node, cst.Call) and index.resolve(node.func) in ("torch.tensor", "torch.Tensor",
                                                                   "torch.FloatTensor", "torch.as_tensor"):
        args = positional_args(node)
        return args[0] if args else None
    if isinstance(node, (cst.List, cst.Tuple)):
        return node
    return None


def class_axis_of(pred, values, scope):
    """-1 when the source flattens or transposes the predictions before the loss (`logits.view(-1, V)`), else 1."""
    node = pred
    for _ in range(6):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in FLATTENING:
            return -1
        if isinstance(node, cst.Name):
            found = values.lookup(node.value, scope)
            if found is None:
                return 1
            node, scope = found
            continue
        return 1
    return 1


def default_loss(target="class"):
    cls = {"class": ("torch.nn.CrossEntropyLoss", "CrossEntropyLoss"), "log_probs": ("torch.nn.NLLLoss", "NLLLoss"),
           "binary_probs": ("torch.nn.BCELoss", "BCELoss")}[target]
    kind = "binary_probs" if target == "binary_probs" else "class"
    return LossPlan(cls[0], cls[1], [], None, "", target=kind)

