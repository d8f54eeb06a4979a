"""torch.optim optimizers -> train_support's torch-rule Keras optimizers, with their hyperparameters and groups.

| torch | train_support | semantics kept |
|---|---|---|
| SGD(lr, momentum, dampening, weight_decay, nesterov) | SGD | coupled L2 (`g + wd*p`), lr-free momentum buffer |
| Adam(lr, betas, eps, weight_decay, amsgrad) | Adam | coupled L2; eps added after the bias-corrected sqrt |
| AdamW(lr, betas, eps, weight_decay=0.01) | AdamW | decoupled decay `p *= 1 - lr*wd` |
| Adadelta(lr=1.0, rho, eps=1e-6, weight_decay) | Adadelta | |
| Adagrad(lr, lr_decay, weight_decay, initial_accumulator_value=0, eps=1e-10) | Adagrad | eps outside the sqrt |
| RMSprop(lr, alpha, eps, weight_decay, momentum, centered) | RMSprop | alpha (Keras rho), eps outside the sqrt |
"""

import libcst as cst

from porter.training.param_groups import GroupReader
from porter.training.plan import OptimizerPlan, Setting
from porter.training.values import Value, keyword_args, literal, positional_args

# torch name -> (train_support class, positional parameter names after params, torch defaults)
OPTIMIZERS = {
    "torch.optim.SGD": ("SGD", ["lr", "momentum", "dampening", "weight_decay", "nesterov"],
                        {"lr": 1e-3, "momentum": 0.0, "dampening": 0.0, "weight_decay": 0.0, "nesterov": False}),
    "torch.optim.Adam": ("Adam", ["lr", "betas", "eps", "weight_decay", "amsgrad"],
                         {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0, "amsgrad": False}),
    "torch.optim.AdamW": ("AdamW", ["lr", "betas", "eps", "weight_decay", "amsgrad"],
                          {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 1e-2,
                           "amsgrad": False}),
    "torch.optim.Adadelta": ("Adadelta", ["lr", "rho", "eps", "weight_decay"],
                             {"lr": 1.0, "rho": 0.9, "eps": 1e-6, "weight_decay": 0.0}),
    "torch.optim.Adagrad": ("Adagrad", ["lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"],
                            {"lr": 1e-2, "lr_decay": 0.0, "weight_decay": 0.0, "initial_accumulator_value": 0.0,
                             "eps": 1e-10}),
    "torch.optim.RMSprop": ("RMSprop", ["lr", "alpha", "eps", "weight_decay", "momentum", "centered"],
                            {"lr": 1e-2, "alpha": 0.99, "eps": 1e-8, "weight_decay": 0.0, "momentum": 0.0,
                             "centered": False}),
}
ALIASES = {"torch.optim.sgd.SGD": "torch.optim.SGD", "torch.optim.adam.Adam": "torch.optim.Adam",
           "torch.optim.adamw.AdamW": "torch.optim.AdamW", "torch.optim.adadelta.Adadelta": "torch.optim.Adadelta",
           "torch.optim.adagrad.Adagrad": "torch.optim.Adagrad", "torch.optim.rmsprop.RMSprop": "torch.optim.RMSprop"}
# torch keyword -> train_support keyword (betas splits into beta_1/beta_2)
RENAMES = {"eps": "epsilon"}
IGNORED = {"foreach", "fused", "capturable", "differentiable"}
GROUP_KEYS = {"lr", "weight_decay", "momentum", "dampening", "nesterov", "betas", "eps", "alpha", "rho", "centered",
              "amsgrad", "lr_decay", "maximize"}
DEFAULT_OPTIMIZER = ("torch.optim.Adam", {"lr": 1e-3})


def canonical_optimizer(name):
    name = ALIASES.get(name, name)
    return name if name in OPTIMIZERS or (name or "").startswith("torch.optim.") and name.count(".") == 2 else None


def is_optimizer(name):
    name = ALIASES.get(name, name) if name else name
    return bool(name) and name.startswith("torch.optim.") and name.count(".") == 2 and name[12:13].isupper()


def read_optimizer(call, scope, values, index, model_names, plan):
    """OptimizerPlan for a `torch.optim.X(params, ...)` call read in `scope`."""
    canonical = ALIASES.get(index.resolve(call.func), index.resolve(call.func))
    line = index.line(call)
    text = index.source.code_of(call).strip()
    if canonical not in OPTIMIZERS:
        plan.note(line, f"{canonical} has no torch-rule counterpart in train_support; train_tpu.py uses "
                        "torch.optim.Adam(lr=1e-3) instead — replace build_optimizer() if that matters")
        return default_optimizer(line, text)
    cls, positional_names, defaults = OPTIMIZERS[canonical]
    keywords = keyword_args(call)
    positional = positional_args(call)
    given = dict(zip(["params"] + positional_names, positional))
    given.update(keywords)
    if canonical == "torch.optim.Adam" and "decoupled_weight_decay" in given:
        flag = values.translate(given.pop("decoupled_weight_decay"), scope)
        if flag is not None and flag.value is True:
            cls = "AdamW"
    settings, lr = [], None
    for key, node in given.items():
        if key == "params" or key in IGNORED:
            continue
        if key not in defaults and key != "maximize":
            plan.note(line, f"{canonical}: argument {key}= is not translated")
            continue
        value = values.translate(node, scope)
        if value is None:
            plan.note(line, f"{canonical}: {key}={index.source.code_of(node).strip()} cannot be read statically; "
                            f"train_tpu.py uses torch's default {defaults.get(key)!r}")
            value = literal(defaults.get(key, False))
        if key == "lr":
            lr = value
        elif key == "betas":
            settings.extend(_split_betas(node, value, values, scope))
        else:
            settings.append(Setting(RENAMES.get(key, key), value))
    if lr is None:
        lr = literal(defaults["lr"])
    if cls == "AdamW" and "weight_decay" not in given:
        settings.append(Setting("weight_decay", literal(defaults["weight_decay"])))
    if cls in ("Adam", "AdamW") and "eps" not in given:
        settings.append(Setting("epsilon", literal(1e-8)))
    result = OptimizerPlan(canonical, cls, settings, line, text, lr=lr)
    params = given.get("params")
    if params is not None:
        _read_groups(result, params, scope, values, index, model_names, plan)
    return result


def default_optimizer(line=None, text=""):
    return OptimizerPlan(DEFAULT_OPTIMIZER[0], "Adam", [Setting("epsilon", literal(1e-8))], line, text,
                         lr=literal(DEFAULT_OPTIMIZER[1]["lr"]))


def _split_betas(node, value, values, scope):
    if isinstance(node, cst.Tuple | cst.List) and len(node.elements) == 2:
        first, second = (values.translate(e.value, scope) for e in node.elements)
        if first is not None and second is not None:
            return [Setting("beta_1", first), Setting("beta_2", second)]
    pairs = []
    for i, name in enumerate(("beta_1", "beta_2")):
        item = value.value[i] if value.known and isinstance(value.value, (tuple, list)) and len(
            value.value) > i else None
        pairs.append(Setting(name, Value(f"{value.operand()}[{i}]", item if item is not None else value.value,
                                         value.refs, value.constants)))
    return pairs


def _read_groups(result, params, scope, values, index, model_names, plan):
    node, node_scope = params, scope
    if isinstance(node, cst.Name):
        found = values.lookup(node.value, scope)
        if found is not None and isinstance(found[0], cst.List):
            node, node_scope = found
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
            "parameters",) and not node.args:
        return
    if not isinstance(node, cst.List) or not node.elements or not all(
            isinstance(e.value, cst.Dict) for e in node.elements):
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
            plan.note(result.line, f"the parameters passed to {result.torch_name} "
                                   f"({index.source.code_of(params).strip()}) are read as all the model's "
                                   "trainable parameters")
        return
    groups, params_nodes = [], []
    for element in node.elements:
        group, params_node = {}, None
        for entry in element.value.elements:
            if not isinstance(entry, cst.DictElement) or not isinstance(entry.key, cst.SimpleString):
                plan.note(result.line, "a parameter group entry is not a plain 'key': value pair; groups ignored")
                return
            key = entry.key.evaluated_value
            if key == "params":
                params_node = entry.value
                continue
            if key not in GROUP_KEYS:
                plan.note(result.line, f"parameter-group setting {key!r} is not translated")
                continue
            value = values.translate(entry.value, node_scope)
            if value is None:
                plan.note(result.line, f"parameter-group setting {key}={index.source.code_of(entry.value).strip()} "
                                       "cannot be read statically; the optimizer's own value is used")
                continue
            group[RENAMES.get(key, key)] = value
        groups.append(group)
        params_nodes.append(params_node)
    if any(p is None for p in params_nodes):
        plan.note(result.line, "a parameter group has no 'params'; groups ignored")
        return
    reader = GroupReader(index, values, model_names)
    code, notes = reader.function_code(params_nodes, node_scope, f"{plan.source_name}:{result.line}")
    for note in notes:
        plan.note(result.line, note)
    if code is None:
        return
    result.groups = groups
    result.group_function = code
