"""Read how the source trains its model: optimizer, schedule, loss, clipping, epochs, batch size, seed, flags.

`read_training(source, main_class, train_source=None) -> TrainingPlan`. Everything is read statically with
libcst; nothing is imported or executed. What cannot be read becomes a default with a note, never a silent guess.
"""

import sys

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.walk import walk
from porter.training import loops
from porter.training.argparse_flags import namespace_names, read_flags
from porter.training.clipping import CLIPPERS, read_clip
from porter.training.gluon_reader import read_gluon_training, uses_gluon_trainer
from porter.training.index import SourceIndex
from porter.training.losses import FUNCTIONAL, MODULES, class_axis_of, default_loss, read_loss
from porter.training.optimizers import default_optimizer, is_optimizer, read_optimizer
from porter.training.plan import TrainingPlan
from porter.training.schedules import is_scheduler, read_schedule
from porter.training.values import Scope, Value, ValueReader, positional_args

SYMBOL_FLAGS = {"epochs": "epochs", "batch_size": "batch_size", "seed": "seed", "log_interval": "log_interval"}
EPOCH_FLAG_NAMES = ("epochs", "num_epochs", "n_epochs", "max_epochs", "epoch")
BATCH_FLAG_NAMES = ("batch_size", "train_batch_size", "bs")


def read_training(source, main_class, train_source=None):
    code = train_source or source
    if uses_gluon_trainer(code):  # Gluon training code (gluon.Trainer): read by gluon_reader into the same plan
        return read_gluon_training(source, main_class, train_source, sys.modules[__name__])
    index = SourceIndex.build(code)
    plan = TrainingPlan(code.path.name, False, default_optimizer(), default_loss())
    values = ValueReader(index, namespaces=namespace_names(index))
    plan.flags = read_flags(index, values, plan.notes)
    values.flags = plan.flags
    model_names = _model_names(index, values, source, main_class, plan)

    backward = loops.find_backward(index)
    optimizer_calls = [c for c in index.calls if is_optimizer(index.resolve(c.node.func))]
    if backward is None and not optimizer_calls:
        _defaults_without_training_code(plan, source, main_class)
        return plan
    plan.has_training_code = True
    info = loops.analyse(index, values, backward) if backward is not None else loops.LoopInfo()
    _map_symbols(plan, info, values, index)
    plan.flag_symbols = {key[1]: symbol for key, symbol in values.symbols.items() if key[0] == "flag"}

    # optimizer
    if optimizer_calls:
        call = _stepped(index, values, optimizer_calls, "step", info)
        plan.optimizer = read_optimizer(call.node, Scope(call.function), values, index, model_names, plan)
        if len(optimizer_calls) > 1:
            plan.note(index.line(call.node), f"{len(optimizer_calls)} optimizers are built in the source; "
                                             f"train_tpu.py uses the one at line {index.line(call.node)}")
    else:
        plan.note(None, "no torch.optim optimizer found; train_tpu.py uses Adam(lr=1e-3)")

    # schedule
    schedule_calls = [c for c in index.calls if is_scheduler(index.resolve(c.node.func))]
    if schedule_calls:
        call, step_call = _stepped_scheduler(index, values, schedule_calls)
        per_batch = loops.scheduler_steps_per_batch(index, step_call, info) if step_call is not None else False
        if step_call is None:
            plan.note(index.line(call.node), "the scheduler's step() call was not found; it is taken to step once "
                                             "per epoch")
        plan.schedule = read_schedule(call.node, Scope(call.function), values, index, plan, not per_batch)

    # loss
    if backward is not None:
        _read_loss(plan, backward, info, values, index, model_names)
    else:
        plan.note(None, "no loss.backward() found; train_tpu.py uses CrossEntropyLoss on the model's outputs")

    # clipping
    for call in index.calls:
        canonical = index.resolve(call.node.func)
        if canonical in CLIPPERS:
            plan.clip = read_clip(canonical, call.node, Scope(call.function), values, index, plan)
            break

    _loop_settings(plan, info, values, index, model_names)
    _summary(plan, info)
    fallbacks = unread_settings(plan)
    if fallbacks:
        plan.note(None, "not read from the source, so train_tpu.py uses its defaults: " + ", ".join(fallbacks))
    return plan


def training_fallbacks(source, main_class, train_script=None):
    """convert's warnings (shown in PORTING.md too): the loop settings of the training code that porter could not
    read and train_tpu.py replaces with its defaults. Unreadable training code is the training script's note."""
    from porter.errors import PorterError
    from porter.frontend.source import parse_source

    train_source = parse_source(train_script, str(train_script)) if train_script is not None else None
    try:
        plan = read_training(source, main_class, train_source)
    except PorterError:
        raise
    except Exception:  # noqa: BLE001 - the training producer reports unreadable training code
        return []
    missing = unread_settings(plan)
    if not missing:
        return []
    return [(f"{plan.source_name}: training settings porter could not read from the source take train_tpu.py's "
             f"defaults: {', '.join(missing)} (set them with train_tpu.py's flags)")]


def unread_settings(plan):
    """The loop settings of the source's training code that porter could not read, each with the default
    train_tpu.py uses instead (nothing for a source without training code: everything is a default there)."""
    if not plan.has_training_code:
        return []
    missing = []
    if plan.steps is None and plan.epochs is None:
        missing.append("epochs (1)")
    if plan.batch_size is None:
        missing.append("batch size (32)")
    if plan.steps is None and plan.source_examples is None and plan.steps_per_epoch is None:
        missing.append("steps per epoch (the --data set's size, else 8 synthetic batches)")
    return missing


# --- model ---------------------------------------------------------------------------------------------------
def _model_names(index, values, source, main_class, plan):
    """Variables holding the model; also records how the training code constructs it (plan.model_factory)."""
    names = set()
    for assignment in index.assignments:
        node, scope = values.resolve_object(assignment.value, Scope(assignment.function), follow_calls=False)
        if not isinstance(node, cst.Call):
            continue
        callee = dotted_name(node.func)
        if callee is None:
            continue
        callee = callee.split(".")[-1] if index.resolve(node.func) and callee not in source.classes else callee
        built = callee in source.classes or (callee in source.functions and _returns_class(source, callee,
                                                                                             main_class))
        if not built:
            continue
        names.add(assignment.target)
        if plan.model_factory is None and (callee == main_class or callee in source.functions):
            plan.model_factory = callee
            args = []
            for arg in node.args:
                if arg.star:
                    plan.note(index.line(node), f"the model is built with {arg.star}{index.source.code_of(arg.value)}"
                                                "; train_tpu.py builds it with the manifest's init_args")
                    plan.model_factory = main_class if callee == main_class else callee
                    args = []
                    break
                value = values.translate(arg.value, scope)
                if value is None:
                    plan.note(index.line(node), f"model argument {index.source.code_of(arg).strip()} cannot be "
                                                "read statically; the constructor's default is used")
                    continue
                args.append((arg.keyword.value if arg.keyword else None, value))
            plan.model_args = args
    for function in index.functions.values():
        for param in function.params.params:
            if param.name.value in ("model", "net", "network"):
                names.add(param.name.value)
    return names


def _returns_class(source, function_name, main_class):
    text = source.code_of(source.functions[function_name])
    return f"{main_class}(" in text or any(f"{name}(" in text for name in source.classes)


# --- symbols: the source's epochs / batch size become the script's --epochs / --batch-size --------------------
def _map_symbols(plan, info, values, index):
    for node, symbol in ((info.epoch_count, "epochs"), (info.batch_size[0] if info.batch_size else None,
                                                        "batch_size")):
        if node is None:
            continue
        if isinstance(node, cst.Name):
            found = index.assignments_of(node.value, None)
            if len(found) == 1 and not any(a.target == node.value for a in index.assignments if a.function):
                values.symbols[("const", node.value)] = symbol
        elif isinstance(node, cst.Attribute) and values.is_namespace(node.value, Scope(info.function)) and \
                node.attr.value != symbol:
            values.symbols[("flag", node.attr.value)] = symbol
    for dest in plan.flags:
        if dest in EPOCH_FLAG_NAMES and ("flag", dest) not in values.symbols and dest != "epochs":
            values.symbols[("flag", dest)] = "epochs"
        if dest in BATCH_FLAG_NAMES and dest != "batch_size":
            values.symbols.setdefault(("flag", dest), "batch_size")


def _stepped(index, values, calls, method, info):
    """Of several constructions, the one whose variable's `.step()` runs in the training function."""
    if len(calls) == 1:
        return calls[0]
    for receiver, call in index.method_calls(method):
        if call.function is not info.function:
            continue
        found = values.resolve_object(cst.Name(receiver), Scope(call.function))
        for candidate in calls:
            if found[0] is candidate.node:
                return candidate
    return calls[0]


def _stepped_scheduler(index, values, calls):
    """(construction, `.step()` CallSite) of the scheduler the training code steps."""
    nodes = {c.node: c for c in calls}
    for receiver, call in index.method_calls("step"):
        found, _ = values.resolve_object(cst.Name(receiver), Scope(call.function))
        if found in nodes:
            return nodes[found], call
    for receiver, call in index.method_calls("step"):
        if "sched" in receiver.lower():
            return calls[-1], call
    return calls[-1], None


# --- loss ----------------------------------------------------------------------------------------------------
def _read_loss(plan, backward, info, values, index, model_names):
    scope = Scope(backward.function)
    receiver = backward.callee.rpartition(".")[0]
    expression = backward.node.func.value if isinstance(backward.node.func, cst.Attribute) else None
    if receiver and "." not in receiver and receiver != "?":
        line = index.line(backward.node)
        candidates = [a for a in index.assignments if a.target == receiver and a.function is backward.function
                      and (index.line(a.node) or 0) <= (line or 0)]
        if candidates:
            expression = candidates[-1].value
            earlier = candidates[:-1]
            if _mentions(expression, receiver) and earlier:
                plan.note(index.line(candidates[-1].node),
                          f"the loss is rescaled after it is computed "
                          f"({index.source.code_of(candidates[-1].node).strip()}); train_tpu.py does not rescale it")
                expression = earlier[-1].value
    terms = _loss_terms(expression)
    found = None
    for term in terms:
        call = _strip_reduction(term)
        if not isinstance(call, cst.Call):
            continue
        canonical = index.resolve(call.func)
        if canonical in FUNCTIONAL:
            found = (read_loss(canonical, call, scope, values, index, plan, functional=True), call)
        else:
            target, target_scope = values.resolve_object(call.func, scope)
            if isinstance(target, cst.Call) and index.resolve(target.func) in MODULES:
                found = (read_loss(index.resolve(target.func), target, target_scope, values, index, plan,
                                   functional=False), call)
        if found is not None:
            others = [t for t in terms if t is not term]
            for other in others:
                plan.note(index.line(backward.node), f"the loss term {index.source.code_of(other).strip()} is not "
                                                     "part of train_tpu.py's loss (only the torch loss is)")
            if _strip_reduction(term) is not term:
                reduction = term.func.attr.value if isinstance(term, cst.Call) else None
                if reduction == "sum":
                    plan.note(found[0].line, "the loss is summed after a per-element torch loss; train_tpu.py "
                                             "averages it")
            break
    if found is None:
        text = index.source.code_of(expression).strip() if expression is not None else "?"
        plan.note(index.line(backward.node), f"the loss ({text}) is not a torch loss porter reads; train_tpu.py "
                                             "uses CrossEntropyLoss on the model's outputs — replace build_loss()")
        return
    loss, call = found
    args = positional_args(call)
    if args:
        loss.class_axis = class_axis_of(args[0], values, scope) if loss.target == "class" else 1
    plan.loss = loss


def _loss_terms(expression):
    if isinstance(expression, cst.BinaryOperation) and isinstance(expression.operator, cst.Add):
        return _loss_terms(expression.left) + _loss_terms(expression.right)
    if isinstance(expression, cst.BinaryOperation) and isinstance(expression.operator, (cst.Multiply, cst.Divide)):
        return _loss_terms(expression.left) if isinstance(expression.right, (cst.Integer, cst.Float, cst.Name)) \
            else [expression]
    return [expression] if expression is not None else []


def _strip_reduction(node):
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("mean",
                                                                                                       "sum"):
        return node.func.value
    return node


def _mentions(node, name):
    found = []

    class Visitor(cst.CSTVisitor):
        def visit_Name(self, n):
            if n.value == name:
                found.append(n)

    walk(node, Visitor())
    return bool(found)


# --- epochs, steps, batch size, seed, log interval -----------------------------------------------------------
def _loop_settings(plan, info, values, index, model_names):
    flags = plan.flags
    scope = Scope(info.function)
    if info.epoch_count is not None:
        plan.epochs = values.translate(info.epoch_count, Scope(index.function_of(info.epoch_loop)))
    if plan.epochs is None and "epochs" in flags:
        plan.epochs = Value("epochs", flags["epochs"].default.value, frozenset({"epochs"}))
    if info.step_count is not None:
        value = values.translate(info.step_count, scope)
        if info.epoch_loop is None:
            plan.steps = value
        elif value is not None:
            plan.source_examples = None
            plan.steps_per_epoch = value
    if info.batch_size is not None:
        plan.batch_size = values.translate(*info.batch_size)
    if plan.batch_size is None:
        found = loops.batch_of_model_call(index, values, info, model_names)
        if found is not None:
            plan.batch_size = values.translate(*found)
    if plan.batch_size is None and "batch_size" in flags:
        plan.batch_size = Value("batch_size", flags["batch_size"].default.value, frozenset({"batch_size"}))
    if info.examples is not None:
        plan.source_examples = values.translate(*info.examples)
    seed = loops.seed_of(index)
    if seed is not None:
        plan.seed = values.translate(*seed)
    if "log_interval" in flags:
        plan.log_interval = Value("log_interval", flags["log_interval"].default.value, frozenset({"log_interval"}))
    else:
        found = loops.log_interval_of(index, info)
        if found is not None:
            plan.log_interval = values.translate(*found)
    for name in ("epochs", "batch_size", "seed", "log_interval", "steps", "source_examples"):
        value = getattr(plan, name)
        if value is not None and not value.known and not value.refs:
            setattr(plan, name, None)


def _summary(plan, info):
    lines = []
    optimizer = plan.optimizer
    if optimizer.line:
        lines.append(f"optimizer {optimizer.torch_name} (line {optimizer.line})"
                     + (f" with {len(optimizer.groups)} parameter groups" if optimizer.groups else ""))
    if plan.schedule is not None:
        lines.append(f"LR schedule {plan.schedule.torch_name} (line {plan.schedule.line}), stepped "
                     f"{'once per epoch' if plan.schedule.per_epoch else 'with every batch'}")
    if plan.loss.line:
        lines.append(f"loss {plan.loss.torch_name} (line {plan.loss.line})")
    if plan.clip is not None:
        lines.append(f"gradient clipping {plan.clip.torch_name} (line {plan.clip.line})")
    for label, value in (("epochs", plan.epochs), ("optimizer steps", plan.steps), ("batch size", plan.batch_size),
                         ("training examples", plan.source_examples), ("steps per epoch", plan.steps_per_epoch)):
        if value is None:
            continue
        default = f" (default {value.value!r})" if value.known and value.code != repr(value.value) else ""
        if value.code in value.refs:
            lines.append(f"{label} from --{value.code.replace('_', '-')}{default}")
        else:
            lines.append(f"{label} {value.code}{default}")
    plan.summary = lines


def _defaults_without_training_code(plan, source, main_class):
    """No training code: Adam(1e-3) and a loss chosen from what the model's forward returns."""
    target = "class"
    info = source.classes.get(main_class)
    forward = info.find_method("forward") if info is not None else None
    if forward is not None:
        returns = []

        class Visitor(cst.CSTVisitor):
            def visit_Return(self, node):
                returns.append(node.value)

        walk(forward, Visitor())
        for value in returns:
            if isinstance(value, cst.Call):
                canonical = source.imports.resolve(value.func) or dotted_name(value.func) or ""
                last = canonical.split(".")[-1]
                if last in ("log_softmax", "LogSoftmax"):
                    target = "log_probs"
                elif last in ("sigmoid",):
                    target = "binary_probs"
    plan.loss = default_loss(target)
    chosen = {"class": "CrossEntropyLoss (classification logits; MSELoss for an output without class scores)",
              "log_probs": "NLLLoss (forward returns log_softmax)",
              "binary_probs": "BCELoss (forward returns a sigmoid)"}[target]
    plan.note(None, f"{source.display_path} has no training code: train_tpu.py uses Adam(lr=1e-3) and {chosen}; "
                    "adjust build_optimizer()/build_loss() to your recipe")
    plan.summary = ["no training code found: defaults (Adam, " + chosen + ")"]

