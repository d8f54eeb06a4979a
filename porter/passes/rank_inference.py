"""Rank inference: the ranks of tensor arguments nobody typed, read off how the code uses them.

Without example inputs (`--input-shape`), a forward argument's rank is unknown, and rank-dependent rewrites (a
`transpose(1, 2)` becoming a pending permutation that the next channels-last layer folds) cannot happen. Here each
forward, helper method and module-level function is read once: values that must have the same rank are joined
(rank-preserving layers and ops, residual adds, rebinding, call arguments with the callee's parameters, a callee's
result with what it returns), and layers that only take one rank (Conv1d: 3, Conv2d: 4, the first fixing layer of
a Sequential, `x.permute(0, 2, 1)`: 3) fix the rank of their group. A group that meets two ranks is unknown: the
pass never guesses. Annotations and `x.dim()` checks are no evidence.

`infer_argument_ranks(translator)` -> {(scope, parameter): rank}, scope `(class, method)` or `(None, function)`.
"""

import libcst as cst

from porter.rules.registry import function_rule_named, keeps_rank, method_rule

CONFLICT = "conflict"
_ELEMENTWISE = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)


class _Groups:
    """Union-find of symbols, each group holding the one rank it was fixed to, or CONFLICT."""

    def __init__(self):
        self.parent, self.rank = {}, {}
        self._keyed = {}  # key -> its one symbol: (scope, parameter) of a parameter, (scope, "<return>") of a return

    def keyed(self, key):
        """The symbol of `key` (the same object every time it is asked for)."""
        symbol = self._keyed.get(key)
        if symbol is None:
            symbol = self._keyed[key] = _Symbol()
        return symbol

    def find(self, symbol):
        parent = self.parent
        up = parent.setdefault(symbol, symbol)
        while up is not symbol:  # (path halving)
            grand = parent[up]
            parent[symbol] = grand
            symbol, up = grand, parent[grand]
        return symbol

    def join(self, a, b):
        a, b = self.find(a), self.find(b)
        if a != b:
            self.parent[b] = a
            self.fix(a, self.rank.pop(b, None))

    def fix(self, symbol, rank):
        if rank is None:
            return
        root = self.find(symbol)
        known = self.rank.get(root)
        self.rank[root] = rank if known in (None, rank) else CONFLICT

    def rank_of(self, symbol):
        found = self.rank.get(self.find(symbol))
        return found if isinstance(found, int) else None


class _Symbol:
    """A tensor value whose rank is tracked. Symbols compare by identity: a parameter's or a return's is one symbol
    per key (`_Groups.keyed`), so the union-find's tables hash and compare them without calling Python (they went
    through a key-comparing `__eq__` and `__hash__` on every step of `find`)."""

    __slots__ = ()


def infer_argument_ranks(translator):
    """{(scope, parameter): rank} for every parameter whose rank its uses fix (see the module docstring)."""
    opaque = set()
    for _ in range(6):  # scopes that may return values of another rank: their callers learn nothing from them
        reader = _Reader(translator, opaque)
        reader.read_all()
        if reader.opaque <= opaque:
            break
        opaque |= reader.opaque
    ranks = {}
    for scope, params in reader.params.items():
        info = translator.source.classes.get(scope[0]) if scope[0] is not None else None
        if info is not None and translator.constructs_itself(info):
            continue  # a recursive class (DLA's Tree): recursion.py settles what its own calls hand it
        for name in params:
            rank = reader.groups.rank_of(reader.groups.keyed((scope, name)))
            if rank is not None:
                ranks[(scope, name)] = rank
    return ranks


class _Reader:
    def __init__(self, translator, opaque):
        self.translator, self.source = translator, translator.source
        self.known_opaque, self.opaque = opaque, set()
        self.groups = _Groups()
        self.params = {}  # scope -> parameter names
        self.positional = {}  # scope -> the names positional arguments fill, in order

    def scopes(self):
        for info in self.source.classes.values():
            for name in info.methods.keys() | {"forward"}:
                definition = info.find_method(name)
                if definition is not None and name != "__init__":
                    yield (info.name, name), info, definition
        for name, definition in self.source.functions.items():
            yield (None, name), None, definition

    def read_all(self):
        for scope, info, definition in self.scopes():
            params = [p for p in declared_params(definition) if p.name.value != "self"]
            self.params[scope] = [p.name.value for p in params if p.star not in ("*", "**")]
            self.positional[scope] = [p.name.value for p in list(definition.params.posonly_params) +
                                      list(definition.params.params) if p.name.value != "self"]
        for scope, info, definition in self.scopes():
            env = {p: self.groups.keyed((scope, p)) for p in self.params[scope]}
            _ScopeReader(self, scope, info).block(definition.body.body, env)

    def call_scope(self, scope, args, kwargs):
        """Join a call's tensor arguments with the callee's parameters; the result (its return group) or None."""
        params = self.params.get(scope)
        if params is None:
            return None
        positional = self.positional[scope]
        for position, arg in enumerate(args):
            if position < len(positional) and isinstance(arg, _Symbol):
                self.groups.join(arg, self.groups.keyed((scope, positional[position])))
        for name, arg in kwargs.items():
            if name in params and isinstance(arg, _Symbol):
                self.groups.join(arg, self.groups.keyed((scope, name)))
        return None if scope in self.known_opaque else self.groups.keyed((scope, "<return>"))


class _ScopeReader:
    def __init__(self, reader, scope, info):
        self.reader, self.scope, self.info = reader, scope, info
        self.groups = reader.groups
        ir = reader.translator.ctx.irs.get(info.name) if info is not None else None
        self.attributes = ir.attributes if ir is not None else {}

    # --- statements --------------------------------------------------------------------------------------
    def block(self, statements, env):
        for statement in statements:
            if isinstance(statement, cst.BaseSmallStatement):  # a one-line body: `def f(x): return x`
                self.small(statement, env)
            else:
                self.statement(statement, env)

    def statement(self, statement, env):
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self.small(small, env)
        elif isinstance(statement, cst.If):
            branches = [dict(env)]
            self.block(statement.body.body, branches[0])
            orelse = statement.orelse
            other = dict(env)
            if isinstance(orelse, cst.If):
                self.statement(orelse, other)
            elif orelse is not None:
                self.block(orelse.body.body, other)
            branches.append(other)
            self.merge(env, branches)
        elif isinstance(statement, (cst.For, cst.While)):
            inner = dict(env)
            if isinstance(statement, cst.For):
                self.bind_loop(statement, inner)
            self.block(statement.body.body, inner)
            if statement.orelse is not None:
                self.block(statement.orelse.body.body, inner)
            self.merge(env, [inner, env])
        elif isinstance(statement, cst.With):
            for item in statement.items:
                self.value(item.item, env)
            self.block(statement.body.body, env)
        elif isinstance(statement, cst.Try):
            inner = dict(env)
            self.block(statement.body.body, inner)
            self.merge(env, [inner, env])
        else:  # nested definitions, match ...: what they bind is unknown
            for name in _assigned_names(statement):
                env[name] = None

    def merge(self, env, branches):
        """After branches: a name keeps its value only where every branch left it the same."""
        for name in set().union(*branches):
            values = [b.get(name) for b in branches]
            env[name] = values[0] if all(v is values[0] for v in values) else None

    def bind_loop(self, statement, env):
        for name in _assigned_names(statement.target):
            env[name] = None
        source = self.value(statement.iter, env)
        if isinstance(statement.target, cst.Name) and hasattr(source, "kind") and source.kind in ("list", "sequential"):
            env[statement.target.value] = source.loop_element()

    def small(self, small, env):
        if isinstance(small, cst.Assign):
            value = self.value(small.value, env)
            self.unpacked_shape(small, env)
            for target in small.targets:
                if isinstance(target.target, cst.Name):
                    env[target.target.value] = value
                else:
                    for name in _assigned_names(target.target):
                        env[name] = None
        elif isinstance(small, cst.AnnAssign):
            value = self.value(small.value, env) if small.value is not None else None
            if isinstance(small.target, cst.Name):
                env[small.target.value] = value
        elif isinstance(small, cst.AugAssign):
            value = self.value(small.value, env)
            if isinstance(small.target, cst.Name):
                current = env.get(small.target.value)
                if isinstance(current, _Symbol) and isinstance(value, _Symbol) and \
                        isinstance(small.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign,
                                                    cst.DivideAssign)):
                    self.groups.join(current, value)
                elif not (isinstance(current, _Symbol) and _is_number(small.value)):
                    env[small.target.value] = None
        elif isinstance(small, cst.Return):
            value = self.value(small.value, env) if small.value is not None else None
            if isinstance(value, _Symbol):
                self.groups.join(value, self.groups.keyed((self.scope, "<return>")))
            else:
                self.reader.opaque.add(self.scope)
        elif isinstance(small, cst.Expr):
            self.value(small.value, env)

    def unpacked_shape(self, assign, env):
        """`B, N, C = x.shape` (or `x.size()`) fixes x's rank: torch raises for any other."""
        node = assign.value
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "size" \
                and not node.args:
            node = node.func
        if not (isinstance(node, cst.Attribute) and node.attr.value in ("shape", "size")):
            return
        symbol = self.value(node.value, env)
        for target in assign.targets:
            if isinstance(symbol, _Symbol) and isinstance(target.target, (cst.Tuple, cst.List)) and not any(
                    isinstance(e, cst.StarredElement) for e in target.target.elements):
                self.groups.fix(symbol, len(target.target.elements))

    # --- expressions -------------------------------------------------------------------------------------
    def value(self, node, env):
        """A _Symbol (a tensor whose rank is tracked), a ModuleRef, or None (anything else)."""
        kind = type(node)
        if kind is cst.Name:
            return env.get(node.value)
        if kind is cst.Attribute:
            if isinstance(node.value, cst.Name) and node.value.value == "self":
                ref = self.attributes.get(node.attr.value)
                return ref if hasattr(ref, "kind") else None
            self.value(node.value, env)
            return None
        if kind is cst.Subscript:
            base = self.value(node.value, env)
            if hasattr(base, "kind") and base.kind in ("list", "sequential") and base.elements and \
                    len({repr(e) for e in base.elements}) == 1:
                return base.element()  # `self.blocks[i]` of a container of one kind of module
            return None
        if kind is cst.Call:
            return self.call(node, env)
        if kind is cst.BinaryOperation:
            left, right = self.value(node.left, env), self.value(node.right, env)
            if not isinstance(node.operator, _ELEMENTWISE):
                return None
            if isinstance(left, _Symbol) and isinstance(right, _Symbol):
                self.groups.join(left, right)
                return left
            if isinstance(left, _Symbol) and _is_number(node.right):
                return left
            if isinstance(right, _Symbol) and _is_number(node.left):
                return right
            return None
        if kind is cst.UnaryOperation:
            operand = self.value(node.expression, env)
            return operand if isinstance(node.operator, (cst.Minus, cst.Plus)) else None
        self.inner(node, env)
        return None

    def inner(self, node, env):
        """Read the expressions inside `node` (tuple elements, subscripts, comprehensions) for what they fix."""
        for child in node.children:
            if isinstance(child, cst.BaseExpression):
                self.value(child, env)
            elif not isinstance(child, (cst.BaseStatement, cst.BaseSmallStatement)):
                self.inner(child, env)

    def call(self, node, env):
        args = [self.value(a.value, env) if not a.star else None for a in node.args if a.keyword is None]
        kwargs = {a.keyword.value: self.value(a.value, env) for a in node.args if a.keyword is not None}
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" and \
                func.attr.value not in self.attributes and self.info is not None and \
                self.info.find_method(func.attr.value) is not None:  # a helper method: `self._apply_conv(x)`
            return self.reader.call_scope((self.info.name, func.attr.value), args, kwargs)
        if isinstance(func, cst.Name) and func.value in self.reader.source.functions and func.value not in env:
            return self.reader.call_scope((None, func.value), args, kwargs)
        canonical = self.reader.source.imports.resolve(func)
        if canonical is not None:
            first = args[0] if args else kwargs.get("input")
            return first if keeps_rank(function_rule_named(canonical)) and isinstance(first, _Symbol) else None
        if isinstance(func, cst.Attribute) and not (isinstance(func.value, cst.Name) and func.value.value == "self"):
            subject = self.value(func.value, env)
            return self.tensor_method(subject, func.attr.value, node) if isinstance(subject, _Symbol) else None
        callee = self.value(func, env)
        if hasattr(callee, "kind"):
            return self.module(callee, args[0] if args else None, args, kwargs)
        return None

    def tensor_method(self, subject, method, node):
        if method == "permute":
            dims = node.args[0].value if len(node.args) == 1 else None
            count = len(dims.elements) if isinstance(dims, (cst.Tuple, cst.List)) else len(node.args)
            if all(_is_number(a.value) for a in node.args) or isinstance(dims, (cst.Tuple, cst.List)):
                self.groups.fix(subject, count)
                return subject
            return None
        return subject if keeps_rank(method_rule(method)) else None  # the rule says (pointwise, same_rank)

    def module(self, ref, first, args=(), kwargs=None):
        """The result of calling module `ref` on `first` (its first tensor), after noting what it fixes."""
        if ref.kind == "rule":
            rule = ref.rule
            if rule.unbatched_in_order:  # (a pad: a batch of images, or torch's unbatched form: its rank kept)
                return first if isinstance(first, _Symbol) else None
            if rule.layout == "channels_last" and rule.rank:
                if isinstance(first, _Symbol):
                    self.groups.fix(first, rule.rank)
                return _fixed(self.groups, rule.rank) if rule.outputs == "tensor" and not rule.rank_delta else None
            if rule.rank is None and rule.rank_delta == 0 and rule.outputs == "tensor":
                return first if isinstance(first, _Symbol) else None
            return None
        if ref.kind == "class" and ref.class_name in self.reader.source.classes:
            return self.reader.call_scope((ref.class_name, "forward"), list(args) or [first], kwargs or {})
        if ref.kind == "sequential" and ref.ordered:
            current = first
            for element in ref.elements:
                current = self.module(element, current)
            return current
        return None


def _fixed(groups, rank):
    symbol = _Symbol()
    groups.fix(symbol, rank)
    return symbol


def _is_number(node):
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def declared_params(definition):
    """A function's parameters in order, `*args` and `**kwargs` marked with their stars (classes.py uses it too)."""
    parameters = definition.params
    result = list(parameters.posonly_params) + list(parameters.params)
    if isinstance(parameters.star_arg, cst.Param):
        result.append(parameters.star_arg.with_changes(star="*"))
    result.extend(parameters.kwonly_params)
    if parameters.star_kwarg is not None:
        result.append(parameters.star_kwarg.with_changes(star="**"))
    return result


def _assigned_names(node):
    found = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, name):
            found.append(name.value)

    if isinstance(node, cst.CSTNode):
        node.visit(Names())
    return found
