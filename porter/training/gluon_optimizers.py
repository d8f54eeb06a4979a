"""gluon.Trainer(params, optimizer, optimizer_params) and mx.lr_scheduler schedulers -> gluon_support's
mxnet-rule optimizers and schedules (sections copied into the generated train_support.py).

| mxnet | train_support | semantics kept |
|---|---|---|
| 'sgd' (learning_rate 0.01, momentum, wd) | GluonSGD | lr-scaled momentum `mom = m*mom - lr*g; w += mom` |
| 'nag' (momentum) | GluonNAG | nag_mom_update's lr-scaled buffer (wd read after the in-place update) |
| 'adam' (learning_rate 0.001, beta1, beta2, epsilon) | GluonAdam | coupled wd; bias corrections in the lr |
| 'rmsprop' (learning_rate 0.001, gamma1, gamma2, epsilon, centered, clip_weights) | GluonRMSProp | eps in sqrt |
| 'adagrad' (eps 1e-7), 'adadelta' (rho 0.9, epsilon 1e-5; no lr) | GluonAdaGrad, GluonAdaDelta | wd outside |
| 'adamax' (learning_rate 0.002), 'nadam' (schedule_decay 0.004) | GluonAdamax, GluonNadam | Adam's coupled wd; nadam's per-update momentum schedule |
| 'signum' (momentum 0.9, wd_lh; momentum 0: signSGD) | GluonSignum | sign of the momentum; decoupled wd_lh |
| 'ftml' (beta1 0.6, beta2 0.999, epsilon 1e-8) | GluonFTML | ftml_update's d/v/z states; lr divides d_t |
| 'lamb' (learning_rate 0.001, epsilon 1e-6, lower/upper_bound, bias_correction) | GluonLAMB | trust ratio |
| 'sgld' | GluonSGLD | `w -= lr/2*(g + wd*w)` + N(0, lr) noise: mxnet's distribution, seeded draws |
| every optimizer: wd, rescale_grad, clip_gradient | | element-wise clip of the rescaled gradient |
| FactorScheduler / MultiFactorScheduler / PolyScheduler / CosineScheduler (warm-up too) | same names | per update |
"""

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.training.plan import OptimizerPlan, SchedulePlan, Setting
from porter.training.values import Value, keyword_args, literal, positional_args

TRAINERS = {"mxnet.gluon.Trainer", "mxnet.gluon.trainer.Trainer"}
COMMON = {"wd": 0.0, "rescale_grad": 1.0, "clip_gradient": None}
# mxnet registry name -> (gluon_support class, its own parameters and defaults, default learning rate)
OPTIMIZERS = {
    "sgd": ("GluonSGD", {"momentum": 0.0}, 0.01),
    "nag": ("GluonNAG", {"momentum": 0.0}, 0.01),
    "adam": ("GluonAdam", {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}, 0.001),
    "rmsprop": ("GluonRMSProp", {"gamma1": 0.9, "gamma2": 0.9, "epsilon": 1e-8, "centered": False,
                                 "clip_weights": None}, 0.001),
    "adagrad": ("GluonAdaGrad", {"eps": 1e-7}, 0.01),
    "adadelta": ("GluonAdaDelta", {"rho": 0.9, "epsilon": 1e-5}, 0.01),  # no learning rate in its update
    "adamax": ("GluonAdamax", {"beta1": 0.9, "beta2": 0.999}, 0.002),
    "nadam": ("GluonNadam", {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8, "schedule_decay": 0.004}, 0.001),
    "signum": ("GluonSignum", {"momentum": 0.9, "wd_lh": 0.0}, 0.01),
    "ftml": ("GluonFTML", {"beta1": 0.6, "beta2": 0.999, "epsilon": 1e-8}, 0.01),
    "lamb": ("GluonLAMB", {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-6, "lower_bound": None, "upper_bound": None,
                           "bias_correction": True}, 0.001),
    "sgld": ("GluonSGLD", {}, 0.01),
}
# optimizers whose mxnet constructor leaves learning_rate None: a scheduler's base_lr stays (the rest overwrite it)
KEEPS_SCHEDULER_LR = {"sgd", "nag", "adagrad", "adadelta", "ftml", "sgld"}
IGNORED = {"lazy_update", "multi_precision", "param_idx2name", "param_dict", "sym", "aggregate_num",
           "use_fused_step"}
SCHEDULE_PREFIX = "mxnet.lr_scheduler."
_WARMUP = {"warmup_steps": 0, "warmup_begin_lr": 0.0, "warmup_mode": "linear"}
# name -> (positional parameter names, defaults; a name absent from defaults is required)
SCHEDULERS = {
    "FactorScheduler": (["step", "factor", "stop_factor_lr", "base_lr", *_WARMUP],
                        {"factor": 1.0, "stop_factor_lr": 1e-8, "base_lr": 0.01, **_WARMUP}),
    "MultiFactorScheduler": (["step", "factor", "base_lr", *_WARMUP], {"factor": 1.0, "base_lr": 0.01, **_WARMUP}),
    "PolyScheduler": (["max_update", "base_lr", "pwr", "final_lr", *_WARMUP],
                      {"base_lr": 0.01, "pwr": 2, "final_lr": 0.0, **_WARMUP}),
    "CosineScheduler": (["max_update", "base_lr", "final_lr", *_WARMUP],
                        {"base_lr": 0.01, "final_lr": 0.0, **_WARMUP}),
}


def is_trainer(canonical):
    return canonical in TRAINERS


def is_gluon_scheduler(canonical):
    return bool(canonical) and canonical.startswith(SCHEDULE_PREFIX) and canonical[len(SCHEDULE_PREFIX):] in \
        SCHEDULERS


def dict_entries(node, scope, values):
    """{key: (value node, scope)} of a dict literal or `dict(k=v)` call, following names; None otherwise."""
    node, scope = values.resolve_object(node, scope, follow_calls=False)
    if isinstance(node, cst.Dict):
        entries = {}
        for element in node.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                return None
            entries[element.key.evaluated_value] = (element.value, scope)
        return entries
    if isinstance(node, cst.Call) and dotted_name(node.func) == "dict" and not positional_args(node):
        return {key: (value, scope) for key, value in keyword_args(node).items()}
    return None


def read_trainer(call, scope, values, index, plan):
    """(OptimizerPlan, SchedulePlan or None) for `gluon.Trainer(params, optimizer, optimizer_params, ...)`."""
    line = index.line(call)
    text = index.source.code_of(call).strip()
    given = dict(zip(["params", "optimizer", "optimizer_params", "kvstore", "compression_params",
                      "update_on_kvstore"], positional_args(call)))
    given.update(keyword_args(call))
    optimizer_node = given.get("optimizer")
    name, entries = None, {}
    if optimizer_node is not None:
        found, found_scope = values.resolve_object(optimizer_node, scope, follow_calls=False)
        if isinstance(found, cst.SimpleString):
            name = found.evaluated_value.lower()
        elif isinstance(found, cst.Call) and (index.resolve(found.func) or "").startswith("mxnet.optimizer."):
            # an Optimizer object: mx.optimizer.Adam(learning_rate=...) takes the same keywords
            name = index.resolve(found.func).rsplit(".", 1)[-1].lower()
            entries = {k: (v, found_scope) for k, v in keyword_args(found).items()}
            if positional_args(found):
                plan.note(line, f"{index.source.code_of(found).strip()}: positional arguments are not read")
        else:
            value = values.translate(optimizer_node, scope)
            name = value.value.lower() if value is not None and isinstance(value.value, str) else None
    if given.get("optimizer_params") is not None:
        read = dict_entries(given["optimizer_params"], scope, values)
        if read is None:
            plan.note(line, f"the optimizer_params of gluon.Trainer "
                            f"({index.source.code_of(given['optimizer_params']).strip()}) cannot be read statically; "
                            "mxnet's defaults are used")
        else:
            entries.update(read)
    if name not in OPTIMIZERS:
        plan.note(line, f"gluon.Trainer optimizer {name!r} has no mxnet-rule counterpart in train_support; "
                        "train_tpu.py uses mxnet's 'adam' (learning_rate 0.001) — replace build_optimizer() if that "
                        "matters")
        name, entries = "adam", {}
    cls, own, default_lr = OPTIMIZERS[name]
    defaults = {**own, **COMMON}
    settings, lr, schedule = [], None, None
    for key, (node, node_scope) in entries.items():
        if key in IGNORED:
            continue
        if key == "lr_scheduler":
            schedule = _read_scheduler(node, node_scope, values, index, plan)
            continue
        if key not in defaults and key not in ("learning_rate", "lr"):
            plan.note(line, f"gluon.Trainer {name}: optimizer parameter {key!r} is not translated")
            continue
        value = values.translate(node, node_scope)
        if value is None:
            default = default_lr if key in ("learning_rate", "lr") else defaults[key]
            plan.note(line, f"gluon.Trainer {name}: {key}={index.source.code_of(node).strip()} cannot be read "
                            f"statically; mxnet's default {default!r} is used")
            continue
        if key in ("learning_rate", "lr"):
            lr = value
        else:
            settings.append(Setting(key, value))
    if lr is None:
        initial = schedule.setting("initial_lr") if schedule is not None and name in KEEPS_SCHEDULER_LR else None
        lr = initial if initial is not None else literal(default_lr)
    canonical = f"mxnet.optimizer.{cls.removeprefix('Gluon')}"  # AdaGrad, AdaDelta, RMSProp: mxnet's spelling
    optimizer = OptimizerPlan(canonical, cls, settings, line, text, lr=lr)
    return optimizer, schedule


def _read_scheduler(node, scope, values, index, plan):
    found, found_scope = values.resolve_object(node, scope, follow_calls=False)
    line = index.line(found) if isinstance(found, cst.CSTNode) else None
    if not isinstance(found, cst.Call) or not is_gluon_scheduler(index.resolve(found.func)):
        canonical = index.resolve(found.func) if isinstance(found, cst.Call) else None
        plan.note(line, f"the lr_scheduler ({index.source.code_of(node).strip()}"
                        + (f", {canonical}" if canonical else "") + ") is not translated; the learning rate stays "
                        "constant in train_tpu.py")
        return None
    canonical = index.resolve(found.func)
    name = canonical[len(SCHEDULE_PREFIX):]
    positional_names, defaults = SCHEDULERS[name]
    given = dict(zip(positional_names, positional_args(found)))
    given.update(keyword_args(found))
    result = SchedulePlan(canonical, name, [], line, index.source.code_of(found).strip(), per_epoch=False)
    for key in given:
        if key not in positional_names:
            plan.note(line, f"{canonical}: argument {key}= is not translated")
    for key in positional_names:
        if key in given:
            value = values.translate(given[key], found_scope)
            if value is None:
                if key not in defaults:
                    plan.note(line, f"{canonical}: {key}={index.source.code_of(given[key]).strip()} cannot be read "
                                    "statically; the schedule is left out")
                    return None
                plan.note(line, f"{canonical}: {key} cannot be read statically; mxnet's default is used")
                value = literal(defaults[key])
        elif key in defaults:
            if defaults[key] == _WARMUP.get(key, object()):
                continue  # no warm-up: the defaults of GluonSchedule
            value = literal(defaults[key])
        else:
            plan.note(line, f"{canonical}: required argument {key} is missing; the schedule is left out")
            return None
        result.settings.append(Setting("initial_lr" if key == "base_lr" else key, value))
    return result


def constant_value(value):
    """A Value's Python value, or None when it is unknown."""
    return value.value if isinstance(value, Value) and value.known else None
