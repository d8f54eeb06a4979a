"""Self attributes an `__init__` decides from the literal constructor arguments of one construction.

`DualPathBlock(..., 'proj', b)` runs `if block_type is 'proj': self.has_proj = True ... else: self.has_proj = False`:
for that construction `self.has_proj` is True, whatever `b` is. The `__init__` body is read, not run: assignments of
literals, of parameters bound to literals and of arithmetic on them are followed through the `if`s their tests decide;
a branch porter cannot decide, a loop or any other statement leaves what it assigns unknown. The result is what a
class's `call` can be specialised for per construction (`modules.static_arguments`).
"""

import ast

import libcst as cst

UNKNOWN = object()
_COMPARE = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
            ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
            ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_ARITHMETIC = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
               ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}
_PLAIN = (bool, int, str, type(None))


def decided_attributes(init, bound, code_of):
    """{attribute: value} for the `self` attributes `init` (a libcst FunctionDef) sets to a value known from
    `bound` ({parameter: literal value}); `code_of(node)`: a node's source text."""
    attrs = {}
    _run(init.body.body if isinstance(init.body, cst.IndentedBlock) else [init.body], dict(bound), attrs, code_of)
    return {name: value for name, value in attrs.items() if value is not UNKNOWN}


def _run(statements, env, attrs, code_of):
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                _simple(small, env, attrs, code_of)
        elif isinstance(statement, cst.If):
            _branch(statement, env, attrs, code_of)
        else:  # loops, with, try, nested definitions: what they assign is not followed
            _forget_assigned(statement, env, attrs)


def _branch(statement, env, attrs, code_of):
    taken = _evaluate(code_of(statement.test), env, attrs)
    orelse = statement.orelse
    if taken is not UNKNOWN:
        if taken:
            _run(statement.body.body, env, attrs, code_of)
        elif isinstance(orelse, cst.If):
            _branch(orelse, env, attrs, code_of)
        elif orelse is not None:
            _run(orelse.body.body, env, attrs, code_of)
        return
    env_a, attrs_a, env_b, attrs_b = dict(env), dict(attrs), dict(env), dict(attrs)
    _run(statement.body.body, env_a, attrs_a, code_of)
    if isinstance(orelse, cst.If):
        _branch(orelse, env_b, attrs_b, code_of)
    elif orelse is not None:
        _run(orelse.body.body, env_b, attrs_b, code_of)
    for target, first, second in ((env, env_a, env_b), (attrs, attrs_a, attrs_b)):
        for name in set(first) | set(second):
            a, b = first.get(name, UNKNOWN), second.get(name, UNKNOWN)
            target[name] = a if a is not UNKNOWN and b is not UNKNOWN and type(a) is type(b) and a == b else UNKNOWN


def _simple(small, env, attrs, code_of):
    if isinstance(small, cst.Assign):
        value = _evaluate(code_of(small.value), env, attrs)
        for target in small.targets:
            _bind(target.target, value, env, attrs)
    elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
        _bind(small.target, UNKNOWN, env, attrs)


def _bind(target, value, env, attrs):
    if isinstance(target, cst.Name):
        env[target.value] = value
    elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
        attrs[target.attr.value] = value
    else:
        _forget_assigned(target, env, attrs)


def _forget_assigned(node, env, attrs):
    """Every name and `self` attribute `node` may assign, or change by a method (`layers.append(...)`), becomes
    unknown; what it only reads (`for d in dims:`) stays known."""
    for child in _descendants(node):
        for target in _targets(child):
            for part in _descendants(target):
                _forget(part, env, attrs)
        if isinstance(child, cst.Call) and isinstance(child.func, cst.Attribute):
            _forget(child.func.value, env, attrs)  # (a method of the value may change it)


def _targets(node):
    """The nodes statement part `node` assigns to."""
    if isinstance(node, cst.AssignTarget):
        return [node.target]
    if isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)):
        return [node.target]
    if isinstance(node, cst.AsName):
        return [node.name]
    return []


def _forget(node, env, attrs):
    if isinstance(node, cst.Name) and node.value in env:
        env[node.value] = UNKNOWN
    elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self" and \
            node.attr.value in attrs:
        attrs[node.attr.value] = UNKNOWN


def _descendants(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def _evaluate(code, env, attrs):
    try:
        tree = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return UNKNOWN
    return _value(tree, env, attrs)


def _value(node, env, attrs):
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, _PLAIN) else UNKNOWN
    if isinstance(node, ast.Name):
        return env.get(node.id, UNKNOWN)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return attrs.get(node.attr, UNKNOWN)
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_value(e, env, attrs) for e in node.elts]
        return UNKNOWN if any(i is UNKNOWN for i in items) else tuple(items) if isinstance(node, ast.Tuple) else \
            UNKNOWN  # (a list would be a value the specialisation compares by identity)
    if isinstance(node, ast.UnaryOp):
        operand = _value(node.operand, env, attrs)
        if operand is UNKNOWN:
            return UNKNOWN
        if isinstance(node.op, ast.Not):
            return not operand
        return -operand if isinstance(node.op, ast.USub) and type(operand) is int else UNKNOWN
    if isinstance(node, ast.IfExp):  # `"stack" if stack else "cat"`
        test = _value(node.test, env, attrs)
        return UNKNOWN if test is UNKNOWN else _value(node.body if test else node.orelse, env, attrs)
    if isinstance(node, ast.BoolOp):
        for operand in node.values:  # left to right, as Python stops: `False and <unknown>` is False
            result = _value(operand, env, attrs)
            if result is UNKNOWN or (not result if isinstance(node.op, ast.And) else result):
                return result
        return result
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _value(node.left, env, attrs), _value(node.right, env, attrs)
        if type(left) is not int or type(right) is not int or (isinstance(node.op, (ast.FloorDiv, ast.Mod)) and
                                                               right == 0):
            return UNKNOWN
        return _ARITHMETIC[type(node.op)](left, right)
    if isinstance(node, ast.Compare):
        left = _value(node.left, env, attrs)
        for op, comparator in zip(node.ops, node.comparators):
            right = _value(comparator, env, attrs)
            if left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN
            if isinstance(op, (ast.Is, ast.IsNot)):  # literals: `block_type is 'proj'` holds for equal constants
                if not (isinstance(left, _PLAIN) and isinstance(right, _PLAIN)):
                    return UNKNOWN
                same = left == right and type(left) is type(right)
                result = same if isinstance(op, ast.Is) else not same
            elif type(op) in _COMPARE:
                try:
                    result = _COMPARE[type(op)](left, right)
                except TypeError:
                    return UNKNOWN
            else:
                return UNKNOWN
            if not result:
                return False
            left = right
        return True
    return UNKNOWN
