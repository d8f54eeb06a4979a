"""The names a Gluon Block saves its own parameters under when it overrides `_collect_params_with_prefix`.

GluonNLP's BERT attention cell keeps `query_weight`, `key_bias`... but saves them as `proj_query.weight`,
`proj_key.bias` (for compatibility with older checkpoints):

    def _collect_params_with_prefix(self, prefix=''):
        if prefix:
            prefix += '.'
        ret = {prefix + 'proj_' + k.replace('_', '.') : v for k, v in self._reg_params.items()}
        ...

The dict comprehension's key over `self._reg_params.items()` is evaluated for each parameter's attribute name (what
mxnet's `_reg_params` is keyed by), `prefix` empty, when it is made only of string literals, those two
names, `+` and the string methods below; the result ({attribute: saved name}) becomes the port's `torch_names`, so
that a `.params` file mxnet wrote loads under its own keys. Anything else gives no names (the attribute names)."""

import ast

import libcst as cst

from porter.frontend.gluon import is_parameter_construction
from porter.frontend.imports import dotted_name
from porter.frontend.walk import walk

STRING_METHODS = frozenset({"replace", "lower", "upper", "strip", "lstrip", "rstrip"})


def saved_parameter_names(methods, imports):
    """{attribute: saved name} for a Block's own parameters that its `_collect_params_with_prefix` renames."""
    collect, init = methods.get("_collect_params_with_prefix"), methods.get("__init__")
    if collect is None or init is None:
        return {}
    key = _comprehension_key(collect)
    if key is None:
        return {}
    expression, variable = key
    names = {}
    for attribute in _parameter_attributes(init, imports):
        saved = _evaluate(expression, {"prefix": "", variable: attribute})
        if isinstance(saved, str) and saved != attribute:
            names[attribute] = saved
    return names


def _comprehension_key(function):
    """(the key expression as an ast tree, the key variable's name) of `{key: v for k, v in self._reg_params.items()}`
    in `function`, or None."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_DictComp(self, node):
            loop = node.for_in
            target = loop.target
            if loop.inner_for_in is None and isinstance(target, cst.Tuple) and len(target.elements) == 2 and \
                    isinstance(target.elements[0].value, cst.Name) and isinstance(loop.iter, cst.Call) and \
                    dotted_name(loop.iter.func) == "self._reg_params.items":
                found.append((cst.Module([]).code_for_node(node.key), target.elements[0].value.value))

    walk(function, Finder())
    if len(found) != 1:
        return None
    code, variable = found[0]
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return None
    return (tree, variable) if _only_string_arithmetic(tree.body, {"prefix", variable}) else None


def _only_string_arithmetic(node, names):
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, ast.Add) and _only_string_arithmetic(node.left, names) and \
            _only_string_arithmetic(node.right, names)
    if isinstance(node, ast.JoinedStr):
        return all(isinstance(v, ast.Constant) or isinstance(v, ast.FormattedValue) and v.conversion == -1 and
                   v.format_spec is None and _only_string_arithmetic(v.value, names) for v in node.values)
    if isinstance(node, ast.Call):
        func = node.func
        return isinstance(func, ast.Attribute) and func.attr in STRING_METHODS and not node.keywords and \
            _only_string_arithmetic(func.value, names) and \
            all(isinstance(a, ast.Constant) and isinstance(a.value, (str, int)) for a in node.args)
    return False


def _evaluate(tree, values):
    """The checked string expression's value (only literals, the given names, + and string methods: no builtins)."""
    try:
        return eval(compile(tree, "<saved name>", "eval"), {"__builtins__": {}}, dict(values))
    except Exception:  # noqa: BLE001 - a key that does not evaluate gives no name
        return None


def _parameter_attributes(init, imports):
    """The attributes `__init__` assigns Gluon Parameters to (`self.attr = self.params.get(...)`), in order."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node):
            if not is_parameter_construction(node.value, imports):
                return
            for target in node.targets:
                name = dotted_name(target.target)
                if name is not None and name.startswith("self.") and name.count(".") == 1 and name[5:] not in found:
                    found.append(name[5:])

    walk(init, Finder())
    return found
