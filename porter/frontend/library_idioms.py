"""Idioms of long library files (d2l's `torch.py`), normalised before the frontend reads the classes:

- `d2l = sys.modules[__name__]`: the module naming itself; `d2l.Module` is the file's own `Module`, so
  `X.attr` becomes `attr` wherever X is such a name (bases, decorators, calls alike);
- `self.save_hyperparameters()` (d2l's HyperParameters, PyTorch Lightning): every constructor parameter becomes an
  attribute of `self`, so the call becomes those assignments (`ignore=[...]` names left out);
- `self.__getattr__("level_%d" % i)`, `self.__setattr__(name, block)` (kuangliu's DLA): the builtins `getattr(self,
  ...)` and `setattr(self, ...)`, which the translator reads (an nn.Module's attribute lookup ends in its
  `__getattr__` either way); calls on `super()` stay (a class's own `__getattr__` asking its base);
- `torch.jit.isinstance(x_e, torch.Tensor)` (MONAI): TorchScript's refinement is the builtin `isinstance` when run
  eagerly; a typing generic as the class (`List[torch.Tensor]`, which the builtin refuses) stays as written;
- `nn_Module = nn.Module`, `ones_like = torch.ones_like`: a top-level name bound to an imported framework name is
  one more import alias of it (`module_aliases`), and the statement is not carried over.

The text rewrites keep every line where it is (the assignments share the call's line), so reported lines are the
source's.
"""

import re

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.names import top_level_bindings

_SELF_MODULE = re.compile(r"^([A-Za-z_]\w*)\s*=\s*sys\.modules\[\s*__name__\s*\]\s*$", re.MULTILINE)
_DUNDER_ATTRIBUTE_CALL = re.compile(r"\.__(?:get|set)attr__\(")
_JIT_ISINSTANCE = "jit.isinstance("
_FORWARDING_LAMBDA = re.compile(r"^[A-Za-z_]\w*\s*=\s*lambda\s+\w+\s*,\s*\*\w+\s*,\s*\*\*\w+\s*:", re.MULTILINE)


def normalised_text(text):
    """`text` with the self-module names and `save_hyperparameters()` calls rewritten (unchanged when it has
    neither: the common case costs two string searches)."""
    names = set(_SELF_MODULE.findall(text))
    if not names and "save_hyperparameters(" not in text and not _FORWARDING_LAMBDA.search(text) and \
            not _DUNDER_ATTRIBUTE_CALL.search(text) and _JIT_ISINSTANCE not in text:
        return text
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return text  # the frontend reports the syntax error with its own message
    return module.visit(_Rewriter(names, forwarding_lambdas(module))).code


def forwarding_lambdas(module):
    """{name: method} of top-level `name = lambda x, *args, **kwargs: x.method(*args, **kwargs)` (d2l's
    `astype = lambda x, *args, **kwargs: x.type(*args, **kwargs)`), each name bound once."""
    found, seen = {}, set()
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            for target in getattr(small, "targets", ()):
                name = dotted_name(target.target)
                if name in seen:
                    found.pop(name, None)
                    continue
                seen.add(name)
                method = _forwarded_method_name(small.value) if len(small.targets) == 1 else None
                if method is not None:
                    found[name] = method
    return found


class _Rewriter(cst.CSTTransformer):
    """`d2l.X` -> `X`; `self.save_hyperparameters(...)` -> `self.a = a; self.b = b` in the enclosing function."""

    def __init__(self, self_module_names, lambdas):
        super().__init__()
        self.self_module_names = self_module_names
        self.lambdas = lambdas
        self.functions = []

    def leave_Call(self, original, updated):
        builtin = _attribute_builtin(updated)
        if builtin is not None:  # `self.__getattr__(name)` -> `getattr(self, name)`
            return updated.with_changes(func=cst.Name(builtin), args=[cst.Arg(updated.func.value), *updated.args])
        if _is_jit_isinstance(updated):
            return updated.with_changes(func=cst.Name("isinstance"))
        # `astype(x, int64)` with `astype = lambda x, *args, **kwargs: x.type(*args, **kwargs)`: `x.type(int64)`
        method = self.lambdas.get(updated.func.value) if isinstance(updated.func, cst.Name) else None
        if method is None or not updated.args or updated.args[0].keyword is not None or updated.args[0].star:
            return updated
        receiver = updated.args[0].value
        if not isinstance(receiver, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not receiver.lpar:
            receiver = receiver.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])  # `(a == b).type(t)`
        return updated.with_changes(func=cst.Attribute(receiver, cst.Name(method)), args=updated.args[1:])

    def leave_Attribute(self, original, updated):
        if isinstance(updated.value, cst.Name) and updated.value.value in self.self_module_names:
            return updated.attr
        return updated

    def visit_FunctionDef(self, node):
        self.functions.append(node)

    def leave_FunctionDef(self, original, updated):
        self.functions.pop()
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        if not self.functions or len(updated.body) != 1 or not isinstance(updated.body[0], cst.Expr):
            return updated
        call = updated.body[0].value
        if not (isinstance(call, cst.Call) and dotted_name(call.func) == "self.save_hyperparameters"):
            return updated
        function = self.functions[-1]
        ignored = _ignored_names(call)
        names = [p.name.value for p in [*function.params.posonly_params, *function.params.params,
                                        *function.params.kwonly_params]
                 if p.name.value != "self" and p.name.value not in ignored and not p.name.value.startswith("_")]
        if not names:
            return updated.with_changes(body=[cst.Pass()])
        assignments = [cst.Assign(targets=[cst.AssignTarget(cst.Attribute(cst.Name("self"), cst.Name(name)))],
                                  value=cst.Name(name)) for name in names]
        return updated.with_changes(body=assignments)


def _attribute_builtin(call):
    """"getattr" / "setattr" for `name.__getattr__(...)` / `name.__setattr__(...)` with plain arguments (the
    receiver a plain name: `super().__getattr__(name)` in a class's own `__getattr__` is no builtin call), else
    None."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in ("__getattr__", "__setattr__") and
            isinstance(func.value, cst.Name)):
        return None
    if any(arg.keyword is not None or arg.star for arg in call.args) or \
            len(call.args) != (1 if func.attr.value == "__getattr__" else 2):
        return None
    return func.attr.value.strip("_")


def _is_jit_isinstance(call):
    """`torch.jit.isinstance(value, cls)` (or `jit.isinstance`) with a class that is no typing generic."""
    return dotted_name(call.func) in ("torch.jit.isinstance", "jit.isinstance") and len(call.args) == 2 and \
        not any(arg.keyword is not None or arg.star for arg in call.args) and \
        not isinstance(call.args[1].value, cst.Subscript)


def _ignored_names(call):
    """The names of `save_hyperparameters(ignore=[...])` (or its first positional argument)."""
    for arg in call.args:
        if (arg.keyword is None or arg.keyword.value == "ignore") and isinstance(arg.value, (cst.List, cst.Tuple,
                                                                                             cst.Set)):
            return {e.value.evaluated_value for e in arg.value.elements if isinstance(e.value, cst.SimpleString)}
    return set()


def module_aliases(module, imports):
    """{name: canonical} of top-level `name = <imported framework name>` statements (`nn_Module = nn.Module`,
    `concat = torch.cat`), where every top-level statement binding the name says the same."""
    aliases = {}
    for name, statements in top_level_bindings(module).items():
        found = {_statement_alias(statement, name, imports) for statement in statements}
        if len(found) == 1 and None not in found:
            aliases[name] = found.pop()
    return aliases


def _statement_alias(statement, name, imports):
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    canonical = alias_assignment(statement.body[0], imports)
    return canonical if canonical is not None and statement.body[0].targets[0].target.value == name else None


def alias_assignment(small, imports):
    """The canonical id `small` (`name = torch.cat`) binds its one plain name to, or None. A lambda forwarding to a
    tensor method (`swapaxes = lambda x, *args, **kwargs: x.swapaxes(*args, **kwargs)`) is torch's function of that
    name where a rule covers it."""
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target,
                                                                                       cst.Name)):
        return None
    if isinstance(small.value, cst.Lambda):
        return _forwarded_method(small.value)
    if not isinstance(small.value, (cst.Name, cst.Attribute)):
        return None
    canonical = imports.resolve(small.value)
    if canonical is None or not (imports.is_torch(canonical) or canonical.startswith("mxnet")):
        return None
    return canonical


def _forwarded_method(function):
    """`torch.<m>` for `lambda x, *args, **kwargs: x.<m>(*args, **kwargs)` when a rule covers torch.<m>."""
    from porter.rules.registry import load_all_rules

    method = _forwarded_method_name(function)
    canonical = f"torch.{method}"
    return canonical if method is not None and canonical in load_all_rules()[1] else None


def _forwarded_method_name(function):
    """`m` for `lambda x, *args, **kwargs: x.<m>(*args, **kwargs)`, else None."""
    if not isinstance(function, cst.Lambda):
        return None
    params = function.params
    if len(params.params) != 1 or not isinstance(params.star_arg, cst.Param) or params.star_kwarg is None or \
            params.kwonly_params or params.posonly_params:
        return None
    body = function.body
    if not (isinstance(body, cst.Call) and isinstance(body.func, cst.Attribute) and
            dotted_name(body.func.value) == params.params[0].name.value and len(body.args) == 2 and
            body.args[0].star == "*" and dotted_name(body.args[0].value) == params.star_arg.name.value and
            body.args[1].star == "**" and dotted_name(body.args[1].value) == params.star_kwarg.name.value):
        return None
    return body.func.attr.value
