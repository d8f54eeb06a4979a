"""torch.optim.lr_scheduler schedulers -> train_support schedules (torch's learning rate per optimizer step).

Whether the source steps the scheduler per batch or per epoch is decided by loops.py; a per-epoch schedule advances
every `steps_per_epoch` optimizer steps. LambdaLR's function is translated to TensorFlow when it is simple
arithmetic of the step (`lambda s: min(1.0, (s + 1) / warmup)`), else it becomes a stub that raises with a note.
"""

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.training.plan import SchedulePlan, Setting
from porter.training.values import BINARY, COMPARE, Value, keyword_args, literal, positional_args

PREFIX = "torch.optim.lr_scheduler."
# name -> (positional names after the optimizer, torch defaults; a name absent from defaults is required)
SCHEDULERS = {
    "StepLR": (["step_size", "gamma"], {"gamma": 0.1}),
    "MultiStepLR": (["milestones", "gamma"], {"gamma": 0.1}),
    "ExponentialLR": (["gamma"], {}),
    "CosineAnnealingLR": (["T_max", "eta_min"], {"eta_min": 0.0}),
    "LinearLR": (["start_factor", "end_factor", "total_iters"],
                 {"start_factor": 1.0 / 3, "end_factor": 1.0, "total_iters": 5}),
    "ConstantLR": (["factor", "total_iters"], {"factor": 1.0 / 3, "total_iters": 5}),
    "PolynomialLR": (["total_iters", "power"], {"total_iters": 5, "power": 1.0}),
    "OneCycleLR": (["max_lr", "total_steps", "epochs", "steps_per_epoch", "pct_start", "anneal_strategy",
                    "cycle_momentum", "base_momentum", "max_momentum", "div_factor", "final_div_factor",
                    "three_phase"],
                   {"total_steps": None, "epochs": None, "steps_per_epoch": None, "pct_start": 0.3,
                    "anneal_strategy": "cos", "cycle_momentum": True, "base_momentum": 0.85, "max_momentum": 0.95,
                    "div_factor": 25.0, "final_div_factor": 1e4, "three_phase": False}),
    "SequentialLR": (["schedulers", "milestones"], {}),
    "LambdaLR": (["lr_lambda"], {}),
}
IGNORED = {"last_epoch", "verbose"}
TF_MATH = {"cos": "tf.cos", "sin": "tf.sin", "exp": "tf.exp", "log": "tf.math.log", "sqrt": "tf.sqrt",
           "floor": "tf.floor", "ceil": "tf.math.ceil"}


def is_scheduler(canonical):
    return bool(canonical) and canonical.startswith(PREFIX) and canonical[len(PREFIX):][:1].isupper()


def read_schedule(call, scope, values, index, plan, per_epoch):
    """SchedulePlan for a `lr_scheduler.X(optimizer, ...)` call, or None (with a note) when unsupported."""
    canonical = index.resolve(call.func)
    name = canonical[len(PREFIX):]
    line = index.line(call)
    text = index.source.code_of(call).strip()
    if name not in SCHEDULERS:
        plan.note(line, f"{canonical} is not translated (the learning rate stays constant in train_tpu.py)"
                  + ("; it needs a metric each epoch" if name == "ReduceLROnPlateau" else ""))
        return None
    positional_names, defaults = SCHEDULERS[name]
    given = dict(zip(["optimizer"] + positional_names, positional_args(call)))
    given.update(keyword_args(call))
    result = SchedulePlan(canonical, name, [], line, text, per_epoch=per_epoch)
    if name == "SequentialLR":
        return _sequential(result, given, scope, values, index, plan)
    if name == "LambdaLR":
        result.lambda_value = _lambda_code(given.get("lr_lambda"), scope, values, index, plan, line)
        return result
    for key in positional_names:
        if key in given:
            value = values.translate(given[key], scope)
            if value is None:
                if key not in defaults:
                    plan.note(line, f"{canonical}: {key}={index.source.code_of(given[key]).strip()} cannot be "
                                    "read statically; the schedule is left out")
                    return None
                plan.note(line, f"{canonical}: {key} cannot be read statically; torch's default is used")
                value = literal(defaults[key])
        elif key in defaults:
            value = literal(defaults[key])
        else:
            plan.note(line, f"{canonical}: required argument {key} is missing; the schedule is left out")
            return None
        result.settings.append(Setting(key, value))
    for key in given:
        if key not in positional_names and key != "optimizer" and key not in IGNORED:
            plan.note(line, f"{canonical}: argument {key}= is not translated")
    if name == "OneCycleLR":
        total = result.setting("total_steps")
        if total.value is None and total.code == "None":
            epochs, per = result.setting("epochs"), result.setting("steps_per_epoch")
            if epochs.code == "None" or per.code == "None":
                plan.note(line, "OneCycleLR needs total_steps or epochs and steps_per_epoch")
                return None
            value = epochs.value * per.value if epochs.known and per.known else None
            total = Value(f"{epochs.operand()} * {per.operand()}", value, epochs.refs | per.refs,
                          epochs.constants | per.constants, atomic=False)
        result.settings = [s for s in result.settings if s.name not in ("epochs", "steps_per_epoch",
                                                                          "total_steps")]
        result.settings.insert(1, Setting("total_steps", total))
    return result


def _sequential(result, given, scope, values, index, plan):
    children = given.get("schedulers")
    milestones = values.translate(given.get("milestones"), scope)
    if not isinstance(children, (cst.List, cst.Tuple)) or milestones is None:
        plan.note(result.line, "SequentialLR: schedulers/milestones cannot be read statically; left out")
        return None
    for element in children.elements:
        node, node_scope = values.resolve_object(element.value, scope)
        if not (isinstance(node, cst.Call) and is_scheduler(index.resolve(node.func))):
            plan.note(result.line, "SequentialLR: a child scheduler cannot be read statically; left out")
            return None
        child = read_schedule(node, node_scope, values, index, plan, result.per_epoch)
        if child is None:
            return None
        result.children.append(child)
    result.settings.append(Setting("milestones", milestones))
    return result


def _lambda_code(node, scope, values, index, plan, line):
    """lr_lambda's value in TensorFlow ops of `t` for a lambda or a def of assignments, `if ...: return` and a
    final return (the warm-up + cosine pattern), else None with a note (train_tpu.py then has a stub)."""
    target, target_scope = values.resolve_object(node, scope) if node is not None else (None, scope)
    translator = None
    try:
        if isinstance(target, cst.Name) and target.value in index.functions:
            function = index.functions[target.value]
            if len(function.params.params) != 1:
                raise ValueError(f"{target.value} takes {len(function.params.params)} parameters")
            translator = LambdaTranslator(function.params.params[0].name.value, values, type(scope)(function), index)
            expression = translator.body(function.body.body)
        elif isinstance(target, cst.Lambda) and len(target.params.params) == 1:
            translator = LambdaTranslator(target.params.params[0].name.value, values, target_scope, index)
            expression, _ = translator.expression(target.body)
        else:
            raise ValueError("not a lambda or a function of the file")
    except ValueError as error:
        plan.note(line, f"LambdaLR: lr_lambda cannot be translated ({error}); train_tpu.py has a stub that raises "
                        "NotImplementedError — write it in TensorFlow ops of t")
        return None
    return Value(expression, None, frozenset(translator.refs), frozenset(translator.constants))


class LambdaTranslator:
    """Arithmetic of the scheduler count `t` (a float32 tensor) as TensorFlow: min/max of tensors ->
    tf.minimum/maximum, `a if cond else b` and `if cond: return a` -> tf.where, math.cos -> tf.cos. Parts that do
    not involve `t` stay plain Python."""

    def __init__(self, variable, values, scope, index):
        self.variable, self.values, self.scope, self.index = variable, values, scope, index
        self.refs, self.constants = set(), set()
        self.locals = {}  # name -> (code, is_tensor) of the function's assignments

    def fail(self, node):
        raise ValueError(" ".join(self.index.source.code_of(node).split()))

    def body(self, statements):
        """Expression of a function body: assignments, `if c: return a` (else: return b), a final return."""
        result = None
        pending = []  # (condition code, value code) of early returns, innermost last
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                            small.targets[0].target, cst.Name):
                        self.locals[small.targets[0].target.value] = self.expression(small.value)
                    elif isinstance(small, cst.Return) and small.value is not None:
                        result = self.expression(small.value)[0]
                        break
                    elif isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString,
                                                                                  cst.ConcatenatedString)):
                        continue
                    else:
                        self.fail(small)
            elif isinstance(statement, cst.If) and statement.orelse is None:
                pending.append((self.expression(statement.test)[0], self._returned(statement.body)))
            elif isinstance(statement, cst.If) and isinstance(statement.orelse, cst.Else):
                test = self.expression(statement.test)[0]
                result = f"tf.where({test}, {self._returned(statement.body)}, {self._returned(statement.orelse.body)})"
            else:
                self.fail(statement)
            if result is not None:
                break
        if result is None:
            raise ValueError("the function has no final return")
        for test, value in reversed(pending):
            result = f"tf.where({test}, {value}, {result})"
        return result

    def _returned(self, block):
        statements = block.body
        if len(statements) == 1 and isinstance(statements[0], cst.SimpleStatementLine) and isinstance(
                statements[0].body[0], cst.Return) and statements[0].body[0].value is not None:
            return self.expression(statements[0].body[0].value)[0]
        raise ValueError("an if branch does more than return a value")

    def expression(self, node):
        """(code, involves t)."""
        if isinstance(node, cst.Name) and node.value == self.variable:
            return "t", True
        if isinstance(node, cst.Name) and node.value in self.locals:
            code, tensor = self.locals[node.value]
            return f"({code})", tensor
        if isinstance(node, cst.BinaryOperation):
            op = BINARY.get(type(node.operator))
            if op is None:
                self.fail(node)
            (left, a), (right, b) = self.expression(node.left), self.expression(node.right)
            return f"({left} {op[0]} {right})", a or b
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            code, tensor = self.expression(node.expression)
            return f"-{code}", tensor
        if isinstance(node, cst.IfExp):
            (test, a), (body, b), (orelse, c) = (self.expression(n) for n in (node.test, node.body, node.orelse))
            if not (a or b or c):
                return f"({body} if {test} else {orelse})", False
            return f"tf.where({test}, {body}, {orelse})", True
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            op = COMPARE.get(type(node.comparisons[0].operator))
            if op is None:
                self.fail(node)
            (left, a), (right, b) = self.expression(node.left), self.expression(node.comparisons[0].comparator)
            return f"({left} {op[0]} {right})", a or b
        if isinstance(node, cst.Call):
            callee = dotted_name(node.func) or ""
            canonical = self.index.resolve(node.func) or callee
            if any(a.keyword is not None or a.star for a in node.args):
                self.fail(node)
            parts = [self.expression(a.value) for a in node.args]
            args, tensor = [p[0] for p in parts], any(p[1] for p in parts)
            if callee in ("min", "max") and len(args) == 2:
                if not tensor:
                    return f"{callee}({args[0]}, {args[1]})", False
                return f"tf.{'minimum' if callee == 'min' else 'maximum'}({args[0]}, {args[1]})", True
            if callee in ("float", "int") and len(args) == 1:
                if not tensor:
                    return f"{callee}({args[0]})", False
                return (f"tf.cast({args[0]}, tf.float32)" if callee == "float"
                        else f"tf.floor({args[0]})"), True
            if canonical.startswith("math.") and canonical[5:] in TF_MATH:
                if not tensor:
                    return f"{canonical}({', '.join(args)})", False
                return f"{TF_MATH[canonical[5:]]}({', '.join(args)})", True
            self.fail(node)
        value = self.values.translate(node, self.scope)
        if value is None:
            self.fail(node)
        self.refs |= value.refs
        self.constants |= value.constants
        return value.operand(), False
