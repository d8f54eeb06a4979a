"""Read how a Gluon source trains its model: gluon.Trainer (optimizer, optimizer_params, lr_scheduler), the
gluon.loss object, the `with autograd.record(): ...; loss.backward(); trainer.step(batch_size)` loop, epochs, batch
size, seed. Same plan as torch's reader (porter/training/reader.py), rendered by the same train_tpu.py template.

    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-4})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for epoch in range(EPOCHS):                       # epochs
        for data, label in train_data:                # gluon.data.DataLoader(..., batch_size=B)
            with autograd.record():
                loss = loss_fn(net(data), label)      # per-sample losses
            loss.backward()                           # gradient of their sum
            trainer.step(data.shape[0])               # / batch size: the mean, as train_tpu.py's step takes it

Read statically with libcst; nothing is imported or executed.
"""

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.walk import walk
from porter.training import loops
from porter.training.argparse_flags import namespace_names, read_flags
from porter.training.gluon_losses import gluon_loss_name, read_gluon_loss, summed
from porter.training.gluon_optimizers import is_trainer, read_trainer
from porter.training.index import SourceIndex
from porter.training.losses import default_loss
from porter.training.optimizers import default_optimizer
from porter.training.plan import Construct, Setting, TrainingPlan
from porter.training.values import Scope, Value, ValueReader, keyword_args, literal, positional_args

LOADERS = {"mxnet.gluon.data.DataLoader", "mxnet.gluon.data.dataloader.DataLoader"}
DATASETS = {"mxnet.gluon.data.ArrayDataset", "mxnet.gluon.data.dataset.ArrayDataset"}
# creation calls whose first dimension (shape=... or the first positional shape) is the number of rows
CREATORS = {"normal", "uniform", "randint", "randn", "zeros", "ones", "empty", "full", "random_normal",
            "random_uniform", "rand"}
REDUCTIONS = ("mean", "sum")
CLIP_GLOBAL_NORM = {"mxnet.gluon.utils.clip_global_norm"}


def trainer_calls(index):
    return [c for c in index.calls if is_trainer(index.resolve(c.node.func))]


def uses_gluon_trainer(source):
    """True when an mxnet source builds a gluon.Trainer (its training code is read by this module)."""
    if getattr(source, "framework", None) != "mxnet":
        return False
    return bool(trainer_calls(SourceIndex.build(source)))


def read_gluon_training(source, main_class, train_source, reader):
    """TrainingPlan of a Gluon source. `reader` is porter.training.reader, whose helpers (model names, loop
    settings, summary) this shares: it hands itself in, which keeps the import graph acyclic."""
    code = train_source or source
    index = SourceIndex.build(code)
    plan = TrainingPlan(code.path.name, True, default_optimizer(), default_loss(), framework="mxnet")
    values = ValueReader(index, namespaces=namespace_names(index))
    plan.flags = read_flags(index, values, plan.notes)
    values.flags = plan.flags
    model_names = reader._model_names(index, values, source, main_class, plan)
    backward = loops.find_backward(index)
    info = loops.analyse(index, values, backward) if backward is not None else loops.LoopInfo()
    if backward is not None:
        _gluon_loops(info, index, values, backward)
    reader._map_symbols(plan, info, values, index)
    plan.flag_symbols = {key[1]: symbol for key, symbol in values.symbols.items() if key[0] == "flag"}

    calls = trainer_calls(index)
    step_arg, trainer_call = _stepped_trainer(index, values, calls)
    plan.optimizer, plan.schedule = read_trainer(trainer_call.node, Scope(trainer_call.function), values, index,
                                                 plan)
    if len(calls) > 1:
        plan.note(index.line(trainer_call.node), f"{len(calls)} gluon.Trainer objects are built in the source; "
                                                 f"train_tpu.py uses the one at line {index.line(trainer_call.node)}")
    if backward is not None:
        _read_loss(plan, backward, step_arg, info, values, index)
    else:
        plan.note(None, "no loss.backward() found; train_tpu.py uses SoftmaxCrossEntropyLoss-like defaults")
    if info.batch_size is None and step_arg is not None:
        batch = _batch_from_step(step_arg, info, values, index)
        if batch is not None:
            info.batch_size = batch
    reader._loop_settings(plan, info, values, index, model_names)
    _read_multipliers(plan, code, values, index)
    for receiver, call in index.method_calls("set_learning_rate"):
        found, _ = values.resolve_object(cst.Name(receiver), Scope(call.function))
        if found in {c.node for c in calls}:
            plan.note(index.line(call.node), f"{receiver}.set_learning_rate(...) is not translated: train_tpu.py's "
                                             "learning rate follows the Trainer's lr_scheduler only (write the "
                                             "decay as an mx.lr_scheduler, or edit build_optimizer())")
            break
    for call in index.calls:
        if index.resolve(call.node.func) in CLIP_GLOBAL_NORM:
            plan.clip = _read_clip(call, plan, step_arg, values, index)
            break
    if plan.seed is None:
        for call in index.calls:
            if index.resolve(call.node.func) in ("mxnet.random.seed", "mxnet.random.seed.seed"):
                args = positional_args(call.node)
                if args:
                    plan.seed = values.translate(args[0], Scope(call.function))
                break
    reader._summary(plan, info)
    fallbacks = reader.unread_settings(plan)
    if fallbacks:
        plan.note(None, "not read from the source, so train_tpu.py uses its defaults: " + ", ".join(fallbacks))
    return plan


# --- the loop -------------------------------------------------------------------------------------------------
def _gluon_loops(info, index, values, backward):
    """Complete the torch loop analysis for Gluon: a batch loop over a gluon.data.DataLoader gives the batch size,
    the training-set size (ArrayDataset of created arrays) and the epoch loop around it; a fixed batch fed to the
    model gives the batch size."""
    around = index.loops_around(backward.node)
    if around and _iterates_losses(around[0], backward):  # `for l in losses: l.backward()`: not the batch loop
        around = around[1:]
        info.batch_loop, info.step_count, info.epoch_loop, info.epoch_count = (around or [None])[0], None, None, None
        if around:
            info.step_count = loops.range_count(around[0])
            if len(around) > 1 and info.step_count is not None:
                info.epoch_loop, info.epoch_count = around[1], loops.range_count(around[1])
    if around and isinstance(around[0], cst.For):
        scope = Scope(backward.function)
        node = around[0].iter
        while isinstance(node, cst.Call) and (dotted_name(node.func) or "") in loops.WRAPPERS and node.args:
            node = node.args[0].value
        target, target_scope = values.resolve_object(node, scope)
        if isinstance(target, cst.Call) and index.resolve(target.func) in LOADERS:
            info.iterates_loader = True
            info.step_count = None
            keywords = keyword_args(target)
            positional = positional_args(target)
            size = keywords.get("batch_size", positional[1] if len(positional) > 1 else None)
            if size is not None:
                info.batch_size = (size, target_scope)
            dataset = keywords.get("dataset", positional[0] if positional else None)
            if dataset is not None:
                rows = _dataset_rows(dataset, target_scope, values, index)
                if rows is not None:
                    info.examples = rows
            if len(around) > 1:
                info.epoch_loop = around[1]
                info.epoch_count = loops.range_count(around[1])
    if info.batch_size is None:
        for call in index.calls:
            if call.function is not backward.function or not isinstance(call.node.func, cst.Name):
                continue
            found, _ = values.resolve_object(call.node.func, Scope(call.function), follow_calls=False)
            args = positional_args(call.node)
            if args and isinstance(found, cst.Call) and dotted_name(found.func) in index.source.classes:
                rows = _rows(args[0], Scope(call.function), values, index)
                if rows is not None:
                    info.batch_size = rows
                    break


def _iterates_losses(loop, backward):
    receiver = backward.node.func.value if isinstance(backward.node.func, cst.Attribute) else None
    return isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and isinstance(receiver, cst.Name) and \
        receiver.value == loop.target.value


def _dataset_rows(node, scope, values, index, depth=0):
    node, scope = values.resolve_object(node, scope)
    if isinstance(node, cst.Call) and index.resolve(node.func) in DATASETS:
        args = positional_args(node)
        return _rows(args[0], scope, values, index) if args else None
    return None


def _rows(node, scope, values, index, depth=0):
    """(expression node, scope) of the first dimension of an array built by an mx.nd / np creation call."""
    if depth > 8:
        return None
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
            "astype", "as_in_context", "copyto", "reshape_like", "copy", "as_nd_ndarray"):
        node = node.func.value
    if isinstance(node, cst.Name):
        found = values.lookup(node.value, scope)
        return _rows(found[0], found[1], values, index, depth + 1) if found else None
    if not isinstance(node, cst.Call):
        return None
    canonical = index.resolve(node.func) or dotted_name(node.func) or ""
    last = canonical.rsplit(".", 1)[-1]
    if last == "array" and positional_args(node):  # mx.nd.array(np.random.randn(N, ...))
        return _rows(positional_args(node)[0], scope, values, index, depth + 1)
    if not (canonical.startswith(("mxnet.", "numpy.")) and last in CREATORS):
        return None
    shape = keyword_args(node).get("shape", keyword_args(node).get("size"))
    args = positional_args(node)
    if shape is None and last in ("zeros", "ones", "empty", "full") and args:
        shape = args[0]
    if shape is None and last in ("randn", "rand") and args:
        return args[0], scope
    if isinstance(shape, (cst.Tuple, cst.List)) and shape.elements:
        return shape.elements[0].value, scope
    return None


def _stepped_trainer(index, values, calls):
    """(argument of `trainer.step(...)` or None, Trainer construction) of the Trainer the loop steps."""
    nodes = {c.node: c for c in calls}
    for method in ("step", "update"):  # update: after trainer.allreduce_grads() (update_on_kvstore=False)
        for receiver, call in index.method_calls(method):
            found, _ = values.resolve_object(cst.Name(receiver), Scope(call.function))
            if found in nodes:
                args = positional_args(call.node) or [keyword_args(call.node).get("batch_size")]
                return (args[0], Scope(call.function)), nodes[found]
    return None, calls[0]


def _batch_from_step(step_arg, info, values, index):
    """`trainer.step(batch_size)`: the batch size, unless it is 1 or the batch's own shape."""
    node, scope = step_arg
    if node is None or isinstance(node, cst.Integer) and node.value == "1":
        return None
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
        return _rows(node.value.value, scope, values, index)
    if isinstance(node, cst.Call) and dotted_name(node.func) == "len":
        return None
    return node, scope


# --- the loss ---------------------------------------------------------------------------------------------------
def _read_loss(plan, backward, step_arg, info, values, index):
    scope = Scope(backward.function)
    expression = backward.node.func.value if isinstance(backward.node.func, cst.Attribute) else None
    if index.resolve(backward.node.func) == "mxnet.autograd.backward":  # autograd.backward(losses)
        expression = (positional_args(backward.node) or [keyword_args(backward.node).get("heads")])[0]
    line = index.line(backward.node)
    for _ in range(3):  # a name, a loop variable over a list of per-device losses, that list
        if not isinstance(expression, cst.Name):
            break
        loop = next((node for node in index.loops_around(backward.node) if isinstance(node, cst.For) and
                     isinstance(node.target, cst.Name) and node.target.value == expression.value), None)
        if loop is not None:
            expression = _element(loop.iter)
            continue
        candidates = [a for a in index.assignments if a.target == expression.value and a.function is
                      backward.function and (index.line(a.node) or 0) <= (line or 0)]
        if not candidates:
            break
        expression = _element(candidates[-1].value)
    reduction = None
    while isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute) and \
            expression.func.attr.value in REDUCTIONS and not positional_args(expression):
        reduction = reduction or expression.func.attr.value
        expression = expression.func.value
    found = None
    if isinstance(expression, cst.Call):
        target, target_scope = (expression.func, scope) if isinstance(expression.func, cst.Call) else \
            values.resolve_object(expression.func, scope, follow_calls=False)
        if isinstance(target, cst.Call):
            name = gluon_loss_name(index.resolve(target.func))
            if name is not None:
                found = read_gluon_loss(name, target, target_scope, values, index, plan)
    if found is None:
        text = index.source.code_of(expression).strip() if expression is not None else "?"
        plan.note(line, f"the loss ({text}) is not a gluon.loss loss porter reads; train_tpu.py uses "
                        "CrossEntropyLoss on the model's outputs — replace build_loss()")
        return
    if len(positional_args(expression)) > 2 or "sample_weight" in keyword_args(expression):  # a loss call here
        plan.note(line, "the loss's sample_weight argument is not translated: train_tpu.py weighs every sample "
                        "alike")
    step_node = step_arg[0] if step_arg is not None else None
    steps_by_one = isinstance(step_node, cst.Integer) and step_node.value == "1"
    if reduction == "mean" and not steps_by_one and step_node is not None:
        plan.note(line, "the source averages the loss before backward() and divides by the batch size again in "
                        "trainer.step(); train_tpu.py averages once (its gradients are the batch size larger)")
    elif reduction != "mean" and steps_by_one:
        found = summed(found)
        plan.note(line, "trainer.step(1) on summed per-sample losses: train_tpu.py sums the loss over the global "
                        "batch too")
    elif isinstance(step_node, cst.Integer) and info.batch_size is not None:
        batch = values.translate(*info.batch_size)
        if batch is not None and batch.known and batch.value != int(step_node.value):
            plan.note(line, f"trainer.step({step_node.value}) with batches of {batch.value}: train_tpu.py averages "
                            "over the batch")
    plan.loss = found


def _element(node):
    """The loss expression inside `[loss_fn(net(X), Y) for X, Y in zip(data, label)]` (one per device, as
    gluon.utils.split_and_load scripts write it); other nodes as they are."""
    if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
        return node.elt
    if isinstance(node, (cst.List, cst.Tuple)) and len(node.elements) == 1:
        return node.elements[0].value
    return node


# --- gradient clipping ---------------------------------------------------------------------------------------------
def _read_clip(call, plan, step_arg, values, index):
    """`gluon.utils.clip_global_norm(grads, max_norm)` before `trainer.step(B)`: the gradients it clips are sums
    over the batch, train_tpu.py's are means, so the norm is scaled by B (1 when the source steps by 1)."""
    line = index.line(call.node)
    given = dict(zip(["arrays", "max_norm", "check_isfinite"], positional_args(call.node)))
    given.update(keyword_args(call.node))
    max_norm = values.translate(given.get("max_norm"), Scope(call.function)) if "max_norm" in given else None
    if max_norm is None:
        plan.note(line, "gluon.utils.clip_global_norm: max_norm cannot be read statically; train_tpu.py does not "
                        "clip the gradients")
        return None
    step_node = step_arg[0] if step_arg is not None else None
    if isinstance(step_node, cst.Integer):
        scale = literal(int(step_node.value))
    elif plan.batch_size is not None and plan.batch_size.known:
        scale = Value("batch_size", plan.batch_size.value, frozenset({"batch_size"}))
    else:
        plan.note(line, "gluon.utils.clip_global_norm: the batch size trainer.step divides by is unknown; the norm is "
                        "taken of the batch-mean gradients")
        scale = literal(1)
    result = Construct("mxnet.gluon.utils.clip_global_norm", "clip_global_norm", [Setting("max_norm", max_norm)],
                       line, index.source.code_of(call.node).strip())
    if not (scale.known and scale.value == 1 and not scale.refs):
        result.settings.append(Setting("scale", scale))
    return result


# --- Parameter.lr_mult / wd_mult -----------------------------------------------------------------------------------
MULTIPLIERS = ("lr_mult", "wd_mult")


def _read_multipliers(plan, code, values, index):
    """`net.collect_params('.*bias').setattr('wd_mult', 0)` and `for _, v in net.collect_params(PATTERN).items():
    v.lr_mult = x` -> parameter groups of the optimizer (the last matching rule decides, as the last assignment
    does in mxnet when the rules set the same attribute)."""
    rules = []  # (pattern Value, {attribute: Value}, line)

    def pattern_of(call):
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and
                call.func.attr.value == "collect_params"):
            return None
        args = positional_args(call) or [keyword_args(call).get("select")]
        if args[0] is None:
            return literal(".*")
        return values.translate(args[0], Scope(index.function_of(call)))

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, node):
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "setattr":
                pattern = pattern_of(node.func.value)
                args = positional_args(node)
                if pattern is not None and len(args) == 2 and isinstance(args[0], cst.SimpleString) and \
                        args[0].evaluated_value in MULTIPLIERS:
                    rules.append((pattern, {args[0].evaluated_value: values.translate(
                        args[1], Scope(index.function_of(node)))}, index.line(node)))

        def visit_For(self, node):
            iterated = node.iter
            if isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Attribute) and \
                    iterated.func.attr.value in ("items", "values"):
                iterated = iterated.func.value
            pattern = pattern_of(iterated)
            if pattern is None:
                return
            target = node.target
            if isinstance(target, cst.Tuple) and len(target.elements) == 2:
                target = target.elements[1].value
            if not isinstance(target, cst.Name):
                return
            found = {}
            for statement in node.body.body:
                for small in getattr(statement, "body", []):
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                            small.targets[0].target, cst.Attribute):
                        attribute = small.targets[0].target
                        if isinstance(attribute.value, cst.Name) and attribute.value.value == target.value and \
                                attribute.attr.value in MULTIPLIERS:
                            found[attribute.attr.value] = values.translate(small.value,
                                                                           Scope(index.function_of(node)))
            if found:
                rules.append((pattern, found, index.line(node)))

    walk(code.module, Visitor())
    if not rules:
        return
    if any(p is None or not isinstance(p.value, str) or any(v is None for v in a.values()) for p, a, _ in rules):
        plan.note(rules[0][2], "a Parameter lr_mult/wd_mult setting cannot be read statically; train_tpu.py uses 1")
        return
    plan.optimizer.groups = [dict(attributes) for _, attributes, _ in rules]
    patterns = ", ".join(f"r{p.value!r}" for p, _, _ in rules)
    lines = ", ".join(f"{plan.source_name}:{line}" for _, _, line in rules)
    plan.optimizer.group_function = (
        "def parameter_group(name, shape):\n"
        f'    """Gluon lr_mult / wd_mult as {lines} set them.\n\n'
        "    The last collect_params pattern that matches the parameter's name decides (len(patterns): none matches,\n"
        "    mxnet's 1). The names are the attribute paths save_parameters writes (fc1.bias), not mxnet's prefixed\n"
        '    names (net0_dense0_bias)."""\n'
        f"    patterns = [{patterns}]\n"
        "    found = [i for i, pattern in enumerate(patterns) if re.match(pattern, name)]\n"
        "    return found[-1] if found else len(patterns)")
    if any(not p.value.startswith(".*") for p, _, _ in rules):
        plan.note(rules[0][2], "Parameter lr_mult/wd_mult patterns are matched against the attribute paths of the "
                               "parameters (fc1.bias); a collect_params pattern that names mxnet's prefixes "
                               "(net0_dense0_) needs adjusting in parameter_group()")
