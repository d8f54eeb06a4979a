"""gluon.loss losses -> gluon_support losses (per-sample losses averaged over the non-batch axes).

| Gluon | train_support | target |
|---|---|---|
| SoftmaxCrossEntropyLoss, SoftmaxCELoss (axis=-1, sparse_label, from_logits, weight) | same name | class |
| L2Loss (weight=1: weight/2 * d^2) | L2Loss | regression |
| L1Loss (weight) | GluonL1Loss | regression |
| SigmoidBinaryCrossEntropyLoss / SigmoidBCELoss (from_sigmoid, weight) | SigmoidBinaryCrossEntropyLoss | binary |
| HuberLoss (rho, weight) | GluonHuberLoss | regression |
"""

from porter.training.plan import LossPlan, Setting
from porter.training.values import keyword_args, literal, positional_args

PREFIX = "mxnet.gluon.loss."
_SCE = ("SoftmaxCrossEntropyLoss", ["axis", "sparse_label", "from_logits", "weight", "batch_axis"],
        {"axis": -1, "sparse_label": True, "from_logits": False, "weight": None, "batch_axis": 0}, "class")
_BCE = ("SigmoidBinaryCrossEntropyLoss", ["from_sigmoid", "weight", "batch_axis"],
        {"from_sigmoid": False, "weight": None, "batch_axis": 0}, "binary_logits")
# Gluon name -> (train_support class, positional parameter names, defaults, target kind)
LOSSES = {
    "SoftmaxCrossEntropyLoss": _SCE,
    "SoftmaxCELoss": _SCE,
    "L2Loss": ("L2Loss", ["weight", "batch_axis"], {"weight": 1.0, "batch_axis": 0}, "regression"),
    "L1Loss": ("GluonL1Loss", ["weight", "batch_axis"], {"weight": None, "batch_axis": 0}, "regression"),
    "SigmoidBinaryCrossEntropyLoss": _BCE,
    "SigmoidBCELoss": _BCE,
    "HuberLoss": ("GluonHuberLoss", ["rho", "weight", "batch_axis"], {"rho": 1, "weight": None, "batch_axis": 0},
                  "regression"),
}


def gluon_loss_name(canonical):
    """The Gluon loss class a canonical name stands for (`mxnet.gluon.loss.L2Loss` -> L2Loss), or None."""
    if canonical and canonical.startswith(PREFIX) and canonical[len(PREFIX):] in LOSSES:
        return canonical[len(PREFIX):]
    return None


def read_gluon_loss(name, call, scope, values, index, plan):
    """LossPlan for the construction `gluon.loss.<name>(...)`."""
    cls, names, defaults, target = LOSSES[name]
    line = index.line(call)
    given = dict(zip(names, positional_args(call)))
    given.update(keyword_args(call))
    result = LossPlan(PREFIX + name, cls, [], line, index.source.code_of(call).strip(), class_axis=1, target=target)
    if target == "class":
        result.class_axis = -1
    for key, node in given.items():
        if key not in defaults:
            plan.note(line, f"{PREFIX + name}: argument {key}= is not translated")
            continue
        value = values.translate(node, scope)
        if value is None:
            plan.note(line, f"{PREFIX + name}: {key}={index.source.code_of(node).strip()} cannot be read "
                            f"statically; Gluon's default {defaults[key]!r} is used")
            continue
        if key == "batch_axis":
            if not (value.known and value.value == 0):
                plan.note(line, f"{PREFIX + name}: batch_axis={value.code} is not translated; train_tpu.py averages "
                                "over the first axis")
            continue
        if key == "axis":
            if value.known and isinstance(value.value, int):
                result.class_axis = value.value
            else:
                plan.note(line, f"{PREFIX + name}: axis={value.code} must be a literal; the last axis is used")
            continue
        if value.known and value.value == defaults[key] and not value.refs:
            continue
        if key == "from_sigmoid" and value.known and value.value:
            result.target = "binary_probs"
        result.settings.append(Setting(key, value))
    if target == "class" and result.class_axis == 1:  # the renderer writes class_axis only where it is not 1
        result.settings.append(Setting("class_axis", literal(1)))
    return result


def summed(loss):
    """The loss reduced by summing over the samples (the source steps the Trainer with 1 on an unreduced loss)."""
    loss.settings.append(Setting("reduction", literal("sum")))
    return loss
