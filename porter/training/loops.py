"""The shape of the source's training loop: which loop runs the batches, which the epochs, how many of each,
the batch size, and whether the LR scheduler is stepped with every batch or once per epoch.

    for epoch in range(1, args.epochs + 1):      # epoch loop -> epochs = args.epochs
        for data, target in train_loader:        # batch loop (iterates a DataLoader)
            ... loss.backward(); optimizer.step()
        scheduler.step()                         # outside the batch loop -> per epoch

A loop over `range(N)` that runs backward on a fixed batch counts N optimizer steps.
"""

from dataclasses import dataclass, field

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.walk import walk
from porter.training.values import LOADERS, Scope, keyword_args, positional_args

WRAPPERS = {"enumerate", "iter", "tqdm", "tqdm.tqdm", "zip", "list"}
CREATORS = {"torch.randn", "torch.rand", "torch.zeros", "torch.ones", "torch.empty", "torch.randint",
            "torch.normal", "torch.arange", "torch.full", "torch.tensor"}
DATASETS = {"torch.utils.data.TensorDataset"}


@dataclass
class LoopInfo:
    backward: object = None  # the `.backward()` CallSite
    function: object = None  # function holding it (None: module level)
    batch_loop: object = None  # innermost loop around backward
    iterates_loader: bool = False
    epoch_loop: object = None
    epoch_count: object = None  # expression node: number of epochs
    step_count: object = None  # expression node: optimizer steps of a fixed-batch loop
    loader: object = None  # (DataLoader call node, scope)
    batch_size: object = None  # (expression node, scope)
    examples: object = None  # (expression node, scope): size of the training set
    notes: list = field(default_factory=list)


def find_backward(index):
    """The `.backward()` call of the training step (the first one outside model classes)."""
    calls = [c for c in index.calls if c.callee.endswith(".backward")]
    return calls[0] if calls else None


def analyse(index, values, backward):
    info = LoopInfo(backward, backward.function)
    loops = index.loops_around(backward.node)
    scope = Scope(backward.function)
    if loops:
        info.batch_loop = loops[0]
        info.loader = loader_of(info.batch_loop, values, scope, index)
        info.iterates_loader = info.loader is not None or _looks_like_loader(info.batch_loop)
        strided = strided_range(info.batch_loop)
        if strided is not None:  # `for i in range(0, N, B)`: batches sliced from N examples
            info.examples, info.batch_size = (strided[0], scope), (strided[1], scope)
        elif not info.iterates_loader:
            count = range_count(info.batch_loop)
            if count is not None:
                info.step_count = count
        outer = loops[1] if len(loops) > 1 else _loop_around_calls_of(index, backward.function)
        if outer is not None and (info.iterates_loader or info.step_count is not None or strided is not None):
            info.epoch_loop = outer
            info.epoch_count = range_count(outer)
    elif backward.function is not None:
        # a per-batch step function (train_step(batch)) called inside the batch loop
        around = _loop_around_calls_of(index, backward.function)
        if around is not None:
            info.batch_loop = around
            caller_scope = Scope(index.function_of(around))
            info.loader = loader_of(around, values, caller_scope, index)
            info.iterates_loader = info.loader is not None or _looks_like_loader(around)
            strided = strided_range(around)
            if strided is not None:
                info.examples, info.batch_size = (strided[0], caller_scope), (strided[1], caller_scope)
            outer_loops = index.loops_around(around)
            outer = outer_loops[0] if outer_loops else _loop_around_calls_of(index, index.function_of(around))
            if outer is not None:
                info.epoch_loop = outer
                info.epoch_count = range_count(outer)
    if info.loader is not None:
        call, call_scope = info.loader
        info.batch_size = _loader_batch_size(call, call_scope, values)
        dataset = positional_args(call)[:1] or [keyword_args(call).get("dataset")]
        if dataset[0] is not None:
            info.examples = dataset_size(dataset[0], call_scope, values, index)
    return info


def loader_of(loop, values, scope, index):
    """(DataLoader call, scope) that a for loop iterates, or None."""
    if not isinstance(loop, cst.For):
        return None
    node = loop.iter
    for _ in range(4):
        if isinstance(node, cst.Call) and (dotted_name(node.func) or "") in WRAPPERS and node.args:
            node = node.args[0].value
            continue
        break
    target, target_scope = values.resolve_object(node, scope)
    if isinstance(target, cst.Call) and index.resolve(target.func) in LOADERS:
        return target, target_scope
    return None


def _looks_like_loader(loop):
    if not isinstance(loop, cst.For):
        return False
    text = cst.Module([]).code_for_node(loop.iter).lower()
    return "loader" in text or "batches" in text or "dataset" in text


def range_count(loop):
    """Expression node of how many times `for _ in range(...)` runs (BinaryOperation for range(a, b))."""
    if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call) or dotted_name(loop.iter.func) != "range":
        return None
    args = positional_args(loop.iter)
    if len(args) == 1:
        return args[0]
    if len(args) == 2:
        start, stop = args
        if isinstance(start, cst.Integer) and start.value == "0":
            return stop
        if isinstance(start, cst.Integer) and start.value == "1" and isinstance(stop, cst.BinaryOperation) and \
                isinstance(stop.operator, cst.Add) and isinstance(stop.right, cst.Integer) and stop.right.value == "1":
            return stop.left
        return cst.BinaryOperation(stop, cst.Subtract(), start)
    return None


def strided_range(loop):
    """(examples node, batch size node) of `for i in range(0, N, B)` (or `range(N0, N, B)`: N - N0 examples)."""
    if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call) or dotted_name(loop.iter.func) != "range":
        return None
    args = positional_args(loop.iter)
    if len(args) != 3:
        return None
    start, stop, step = args
    if isinstance(start, cst.Integer) and start.value == "0":
        return stop, step
    return cst.BinaryOperation(stop, cst.Subtract(), start), step


def _loop_around_calls_of(index, function):
    """The innermost loop around a call of `function` elsewhere in the file."""
    if function is None:
        return None
    for call in index.calls:
        if call.callee.split(".")[-1] == function.name.value and call.node is not None:
            loops = index.loops_around(call.node)
            if loops:
                return loops[0]
    return None


def _loader_batch_size(call, scope, values):
    keywords = keyword_args(call)
    if "batch_size" in keywords:
        return keywords["batch_size"], scope
    positional = positional_args(call)
    if len(positional) >= 2:
        return positional[1], scope
    for arg in call.args:
        if arg.star == "**":
            found = values.resolve_object(arg.value, scope)
            node, node_scope = found
            if isinstance(node, cst.Dict):
                for element in node.elements:
                    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString) and \
                            element.key.evaluated_value == "batch_size":
                        return element.value, node_scope
            if isinstance(node, cst.Call) and dotted_name(node.func) == "dict":
                value = keyword_args(node).get("batch_size")
                if value is not None:
                    return value, node_scope
    return None


def dataset_size(node, scope, values, index, depth=0):
    """(expression node, scope) of the number of examples of a dataset expression, or None."""
    if depth > 8:
        return None
    node, scope = values.resolve_object(node, scope)
    if isinstance(node, cst.Call) and index.resolve(node.func) in DATASETS:
        args = positional_args(node)
        return tensor_rows(args[0], scope, values, index) if args else None
    return None


def tensor_rows(node, scope, values, index, depth=0):
    """(expression node, scope) of the first dimension of a tensor expression built by a torch creation call."""
    if depth > 8:
        return None
    while True:
        if isinstance(node, cst.Subscript):
            first = node.slice[0].slice if node.slice else None
            if isinstance(first, cst.Slice) and first.lower is None and first.upper is None:
                node = node.value
                continue
            return None
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
                "float", "long", "to", "contiguous", "clone", "detach", "cuda", "int", "half"):
            node = node.func.value
            continue
        break
    if isinstance(node, cst.Name):
        found = values.lookup(node.value, scope)
        return tensor_rows(found[0], found[1], values, index, depth + 1) if found else None
    if isinstance(node, cst.Call) and index.resolve(node.func) in CREATORS:
        canonical = index.resolve(node.func)
        args = positional_args(node)
        if canonical == "torch.randint":
            shape = args[-1] if len(args) >= 2 else keyword_args(node).get("size")
            if isinstance(shape, (cst.Tuple, cst.List)) and shape.elements:
                return shape.elements[0].value, scope
            return None
        if canonical in ("torch.tensor", "torch.arange"):
            return None
        if len(args) == 1 and isinstance(args[0], (cst.Tuple, cst.List)) and args[0].elements:
            return args[0].elements[0].value, scope
        if args:
            return args[0], scope
    return None


def batch_of_model_call(index, values, info, model_names):
    """(node, scope) of the batch size when the loop feeds the model a fixed tensor: `x = torch.randn(64, ...)`."""
    function = info.function
    for call in index.calls:
        if call.function is not function or call.callee not in model_names:
            continue
        args = positional_args(call.node)
        if args:
            found = tensor_rows(args[0], Scope(function), values, index)
            if found is not None:
                return found
    return None


def scheduler_steps_per_batch(index, step_call, info):
    """True when `scheduler.step()` runs with every optimizer step (inside the batch loop or the step function)."""
    loops = index.loops_around(step_call.node)
    backward = info.backward.node if info.backward is not None else None
    if not loops:
        # in the step function that runs backward outside any loop of its own: called once per batch
        return step_call.function is not None and step_call.function is info.function and backward is not None \
            and not index.loops_around(backward)
    innermost = loops[0]
    if innermost is info.batch_loop:
        return True
    if backward is not None and index.inside(backward, innermost):
        around = index.loops_around(backward)
        return bool(around) and around[0] is innermost
    return False


def seed_of(index):
    """Expression node of `torch.manual_seed(x)`, or None."""
    for call in index.calls:
        if index.resolve(call.node.func) in ("torch.manual_seed", "torch.random.manual_seed"):
            args = positional_args(call.node)
            if args:
                return args[0], Scope(call.function)
    return None


def log_interval_of(index, info):
    """`if step % N == 0: print(...)` inside the training loop -> (N node, scope)."""
    loop = info.batch_loop
    if loop is None:
        return None
    found = []

    class Visitor(cst.CSTVisitor):
        def visit_If(self, node):
            test = node.test
            if isinstance(test, cst.Comparison) and isinstance(test.left, cst.BinaryOperation) and isinstance(
                    test.left.operator, cst.Modulo):
                found.append(test.left.right)

    walk(loop, Visitor())
    return (found[0], Scope(info.function)) if found else None
