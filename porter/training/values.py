"""Static values of the training code, as Python expressions in the generated script's terms.

`lr=args.lr` becomes the script parameter `lr` (its default the argparse default), `T_max=EPOCHS * len(loader)`
becomes `epochs * steps_per_epoch`, `LR * 0.1` keeps the module constant `LR` (copied into the script), a function
parameter is followed to the argument its (single) call site passes. Nothing is executed: each value also carries
its Python value with every flag at its default, computed from literals only (UNKNOWN otherwise).
"""

import math
import operator
from dataclasses import dataclass, field

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.walk import walk


class _Unknown:
    def __repr__(self):
        return "UNKNOWN"

    def __bool__(self):
        return False


UNKNOWN = _Unknown()

BINARY = {cst.Add: ("+", operator.add), cst.Subtract: ("-", operator.sub), cst.Multiply: ("*", operator.mul),
          cst.Divide: ("/", operator.truediv), cst.FloorDivide: ("//", operator.floordiv),
          cst.Modulo: ("%", operator.mod), cst.Power: ("**", operator.pow)}
COMPARE = {cst.LessThan: ("<", operator.lt), cst.LessThanEqual: ("<=", operator.le),
           cst.GreaterThan: (">", operator.gt), cst.GreaterThanEqual: (">=", operator.ge),
           cst.Equal: ("==", operator.eq), cst.NotEqual: ("!=", operator.ne)}
BUILTINS = {"int": int, "float": float, "round": round, "abs": abs, "min": min, "max": max, "bool": bool}
MATH = {"sqrt", "ceil", "floor", "log", "exp", "cos", "sin", "pi", "e", "inf", "log2", "log10", "pow"}
LOADERS = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}


@dataclass(frozen=True)
class Value:
    """A hyperparameter: `code` (Python in the script's terms), its default `value`, the script parameters it
    reads (`refs`: flag dests, `steps_per_epoch`, `epochs`, `batch_size`) and module constants it names."""

    code: str
    value: object = UNKNOWN
    refs: frozenset = frozenset()
    constants: frozenset = frozenset()
    atomic: bool = True

    @property
    def known(self):
        return self.value is not UNKNOWN

    def operand(self):
        return self.code if self.atomic else f"({self.code})"


def literal(value):
    """A Value for a Python literal."""
    return Value(repr(value), value)


@dataclass
class Scope:
    """Where names are looked up: a function (None: module level), the call that entered it when known."""

    function: object = None
    call: object = None
    caller: "Scope" = None

    def depth(self):
        return 0 if self.caller is None else 1 + self.caller.depth()


@dataclass
class ValueReader:
    index: object
    flags: dict = field(default_factory=dict)  # dest -> Flag
    symbols: dict = field(default_factory=dict)  # ("const", NAME) or ("flag", dest) -> script parameter name
    namespaces: set = field(default_factory=set)  # names bound to parse_args() results

    # --- names -------------------------------------------------------------------------------------------
    def lookup(self, name, scope, seen=None):
        """(expression node, scope) that `name` stands for in `scope`, or None."""
        seen = seen or set()
        key = (name, id(scope.function))
        if key in seen or scope.depth() > 8:
            return None
        seen.add(key)
        if scope.function is not None:
            local = self.index.assignments_of(name, scope.function)
            if len(local) == 1:
                return local[0].value, scope
            if len(local) > 1:
                return None
            bound = self.bind_parameter(name, scope)
            if bound is not None:
                return bound
            if self._is_parameter(name, scope.function):
                return None
            outer = self.index.function_of(scope.function)
            if outer is not None:  # a closure's free name: the enclosing function's
                return self.lookup(name, Scope(outer), seen)
        module = self.index.assignments_of(name, None)
        if len(module) == 1:
            return module[0].value, Scope()
        return None

    def _is_parameter(self, name, function):
        params = function.params
        return any(p.name.value == name for p in (*params.params, *params.kwonly_params, *params.posonly_params))

    def bind_parameter(self, name, scope):
        """The argument passed for parameter `name` of scope.function, or its default."""
        function = scope.function
        params = function.params
        positional = [p for p in (*params.posonly_params, *params.params)]
        names = [p.name.value for p in positional]
        param = next((p for p in (*positional, *params.kwonly_params) if p.name.value == name), None)
        if param is None:
            return None
        calls = [scope.call] if scope.call is not None else [
            c.node for c in self.index.calls if c.callee.split(".")[-1] == function.name.value]
        caller_scopes = [scope.caller] if scope.call is not None else [
            Scope(self.index.function_of(c)) for c in calls]
        found = []
        for call, caller in zip(calls, caller_scopes):
            argument = _argument_for(call, name, names)
            if argument is not None:
                found.append((argument, caller))
        if found:
            codes = {self.source_code(a) for a, _ in found}
            if len(codes) == 1:
                return found[0]
            return None
        if param.default is not None:
            return param.default, Scope()
        return None

    def source_code(self, node):
        return self.index.source.code_of(node).strip()

    def resolve_object(self, node, scope, depth=0, follow_calls=True):
        """Follow names, `.to(device)`-style chains and (with follow_calls) calls of in-file functions to the
        expression that builds an object: returns (node, scope)."""
        if depth > 12:
            return node, scope
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
                "to", "cuda", "cpu", "train", "float", "double"):
            node = node.func.value
        if isinstance(node, cst.Name):
            found = self.lookup(node.value, scope)
            return self.resolve_object(found[0], found[1], depth + 1, follow_calls) if found else (node, scope)
        if isinstance(node, cst.Call) and follow_calls:
            callee = dotted_name(node.func)
            function = self.index.functions.get(callee) if callee else None
            if function is not None and callee not in self.index.source.classes:
                returned = _single_return(function)
                if returned is not None:
                    return self.resolve_object(returned, Scope(function, node, scope), depth + 1)
        return node, scope

    def is_namespace(self, node, scope):
        """True when `node` is the argparse namespace (`args` from `parser.parse_args()`)."""
        if not isinstance(node, cst.Name):
            return False
        target, _ = self.resolve_object(node, scope)
        if isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute) and target.func.attr.value in (
                "parse_args", "parse_known_args"):
            return True
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Call) and isinstance(
                target.value.func, cst.Attribute) and target.value.func.attr.value == "parse_known_args":
            return True
        # a free name: the namespace when it is called like the parse_args() results of the file (or `args`)
        return isinstance(target, cst.Name) and bool(self.flags) and (
            node.value in self.namespaces or node.value in ("args", "opt", "opts", "flags", "FLAGS"))

    # --- translation -------------------------------------------------------------------------------------
    def translate(self, node, scope, depth=0):
        """Value of expression `node` in `scope`, or None when it cannot be read statically."""
        if node is None or depth > 40:
            return None
        if isinstance(node, cst.Integer):
            return Value(node.value, int(node.value, 0))
        if isinstance(node, cst.Float):
            return Value(node.value, float(node.value))
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            value = node.evaluated_value
            return Value(repr(value), value) if isinstance(value, str) else None
        if isinstance(node, cst.Name):
            return self._name(node, scope, depth)
        if isinstance(node, cst.Attribute):
            return self._attribute(node, scope, depth)
        if isinstance(node, cst.BinaryOperation):
            return self._binary(node, scope, depth)
        if isinstance(node, cst.UnaryOperation):
            inner = self.translate(node.expression, scope, depth + 1)
            if inner is None:
                return None
            if isinstance(node.operator, cst.Minus):
                value = -inner.value if inner.known else UNKNOWN
                return Value(f"-{inner.operand()}", value, inner.refs, inner.constants)
            if isinstance(node.operator, cst.Plus):
                return inner
            if isinstance(node.operator, cst.Not):
                value = (not inner.value) if inner.known else UNKNOWN
                return Value(f"not {inner.operand()}", value, inner.refs, inner.constants, atomic=False)
            return None
        if isinstance(node, (cst.Tuple, cst.List)):
            items = [self.translate(e.value, scope, depth + 1) for e in node.elements]
            if any(i is None for i in items) or any(isinstance(e, cst.StarredElement) for e in node.elements):
                return None
            open_, close = ("(", ")") if isinstance(node, cst.Tuple) else ("[", "]")
            code = ", ".join(i.code for i in items) + ("," if isinstance(node, cst.Tuple) and len(items) == 1 else "")
            values = [i.value for i in items]
            value = UNKNOWN if any(v is UNKNOWN for v in values) else (
                tuple(values) if isinstance(node, cst.Tuple) else list(values))
            return _combine(f"{open_}{code}{close}", value, items)
        if isinstance(node, cst.Subscript):
            return self._subscript(node, scope, depth)
        if isinstance(node, cst.Call):
            return self._call(node, scope, depth)
        if isinstance(node, cst.IfExp):
            parts = [self.translate(n, scope, depth + 1) for n in (node.body, node.test, node.orelse)]
            if any(p is None for p in parts):
                return None
            body, test, orelse = parts
            value = UNKNOWN
            if test.known:
                value = body.value if test.value else orelse.value
            return _combine(f"{body.operand()} if {test.operand()} else {orelse.operand()}", value, parts,
                            atomic=False)
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            target = node.comparisons[0]
            op = COMPARE.get(type(target.operator))
            left = self.translate(node.left, scope, depth + 1)
            right = self.translate(target.comparator, scope, depth + 1)
            if op is None or left is None or right is None:
                return None
            value = op[1](left.value, right.value) if left.known and right.known else UNKNOWN
            return _combine(f"{left.operand()} {op[0]} {right.operand()}", value, [left, right], atomic=False)
        return None

    def _name(self, node, scope, depth):
        name = node.value
        if name in ("True", "False", "None"):
            return Value(name, {"True": True, "False": False, "None": None}[name])
        if scope.function is not None:
            local = self.index.assignments_of(name, scope.function)
            if len(local) == 1:
                inner = self.translate(local[0].value, scope, depth + 1)
                return inner
            if len(local) > 1:
                return None
            bound = self.bind_parameter(name, scope)
            if bound is not None:
                return self.translate(bound[0], bound[1], depth + 1)
            if self._is_parameter(name, scope.function):
                return None
            outer = self.index.function_of(scope.function)
            if outer is not None:  # a closure's free name: the enclosing function's
                return self._name(node, Scope(outer), depth + 1)
        module = self.index.assignments_of(name, None)
        if len(module) == 1:
            symbol = self.symbols.get(("const", name))
            inner = self.translate(module[0].value, Scope(), depth + 1)
            if symbol is not None:
                return Value(symbol, inner.value if inner else UNKNOWN, frozenset({symbol}))
            if inner is None:
                return None
            if inner.refs:  # a constant computed from flags or epochs: inline its expression
                return inner
            return Value(name, inner.value, inner.refs, inner.constants | {name})
        return None

    def _attribute(self, node, scope, depth):
        base = dotted_name(node.value)
        attr = node.attr.value
        if base == "math" or self.index.resolve(node.value) == "math":
            if attr in ("pi", "e", "inf", "tau"):
                return Value(f"math.{attr}", getattr(math, attr))
            return None
        if self.is_namespace(node.value, scope):
            flag = self.flags.get(attr)
            if flag is None:
                return None
            symbol = self.symbols.get(("flag", attr), attr)
            return Value(symbol, flag.default.value if flag.default is not None else None, frozenset({symbol}))
        return None

    def _binary(self, node, scope, depth):
        op = BINARY.get(type(node.operator))
        left = self.translate(node.left, scope, depth + 1)
        right = self.translate(node.right, scope, depth + 1)
        if op is None or left is None or right is None:
            return None
        value = UNKNOWN
        if left.known and right.known:
            try:
                value = op[1](left.value, right.value)
            except (ArithmeticError, TypeError, ValueError):
                value = UNKNOWN
        return _combine(f"{left.operand()} {op[0]} {right.operand()}", value, [left, right], atomic=False)

    def _subscript(self, node, scope, depth):
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return None
        base = self.translate(node.value, scope, depth + 1)
        index = self.translate(node.slice[0].slice.value, scope, depth + 1)
        if base is None or index is None or not isinstance(index.value, (int, str)):
            return None
        value = UNKNOWN
        if base.known:
            try:
                value = base.value[index.value]
            except (IndexError, KeyError, TypeError):
                return None
        return _combine(f"{base.operand()}[{index.code}]", value, [base, index])

    def _call(self, node, scope, depth):
        callee = dotted_name(node.func)
        args = [a for a in node.args if a.keyword is None and not a.star]
        if callee == "len" and len(args) == 1:
            target, _ = self.resolve_object(args[0].value, scope)
            loader_name = isinstance(target, cst.Name) and "loader" in target.value.lower()
            if loader_name or isinstance(target, cst.Call) and self.index.resolve(target.func) in LOADERS:
                return Value("steps_per_epoch", UNKNOWN, frozenset({"steps_per_epoch"}))
            inner = self.translate(args[0].value, scope, depth + 1)
            if inner is not None and inner.known and hasattr(inner.value, "__len__"):
                return _combine(f"len({inner.code})", len(inner.value), [inner])
            return None
        canonical = self.index.resolve(node.func) or callee
        if callee in BUILTINS or (canonical and canonical.startswith("math.") and canonical[5:] in MATH):
            if any(a.keyword is not None or a.star for a in node.args):
                return None
            items = [self.translate(a.value, scope, depth + 1) for a in args]
            if any(i is None for i in items):
                return None
            function = BUILTINS.get(callee) or getattr(math, canonical[5:])
            name = callee if callee in BUILTINS else canonical
            value = UNKNOWN
            if all(i.known for i in items):
                try:
                    value = function(*[i.value for i in items])
                except (ArithmeticError, TypeError, ValueError):
                    value = UNKNOWN
            return _combine(f"{name}({', '.join(i.code for i in items)})", value, items)
        return None


def _combine(code, value, parts, atomic=True):
    refs = frozenset().union(*[p.refs for p in parts]) if parts else frozenset()
    constants = frozenset().union(*[p.constants for p in parts]) if parts else frozenset()
    return Value(code, value, refs, constants, atomic)


def _argument_for(call, name, positional_names):
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    offset = 1 if positional_names and positional_names[0] in ("self", "cls") else 0
    plain = [a for a in call.args if a.keyword is None and not a.star]
    if name in positional_names:
        position = positional_names.index(name) - offset
        if 0 <= position < len(plain):
            return plain[position].value
    return None


def _single_return(function):
    """The expression of a function's only `return` statement (nested functions excluded), else None."""
    found = []

    class Visitor(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            return node is function

        def visit_Lambda(self, node):
            return False

        def visit_Return(self, node):
            found.append(node.value)

    walk(function, Visitor())
    return found[0] if len(found) == 1 and found[0] is not None else None


def keyword_args(call):
    """{keyword: expression} of a call."""
    return {a.keyword.value: a.value for a in call.args if a.keyword is not None}


def positional_args(call):
    return [a.value for a in call.args if a.keyword is None and not a.star]
