"""Models a function builds as an `nn.Sequential`: `def make_model(num_classes=10): return nn.Sequential(...)`.

Small projects and tutorials write their model so, with no module class at all. The function is read as the
constructor of a class of its own, an `nn.Sequential` subclass whose `__init__` runs the function's statements and
hands its children to `nn.Sequential` as the function does:

    class MakeModel(nn.Sequential):
        def __init__(self, num_classes=10):
            super().__init__(...)

added to the text porter translates (not to the user's file). The port gets that class and a function `make_model`
building it (frontend/model_entry.py's ModelEntry); torch's side builds the model with the source's own function.
The children keep their names ("0", "1.0", ... or an OrderedDict's), so torch's state_dict loads as it is.
"""

import textwrap

import libcst as cst

from porter.frontend.factory_values import free_names, node_code
from porter.frontend.model_entry import ModelEntry
from porter.frontend.names import top_level_bindings
from porter.frontend.walk import descendants

SEQUENTIAL = "torch.nn.Sequential"


def sequential_factories(source):
    """{name: (function, the Sequential call it returns)} of the file's top-level functions that end by returning an
    `nn.Sequential(...)` (directly, or a name the statement before binds to one) and return nowhere else."""
    found = {}
    for name, function in source.functions.items():
        if not isinstance(function, cst.FunctionDef) or not isinstance(function.body, cst.IndentedBlock):
            continue
        statements = function.body.body
        returns = [node for node in descendants(function.body) if isinstance(node, cst.Return)]
        last = _small(statements[-1]) if statements else None
        if len(returns) != 1 or not isinstance(last, cst.Return) or last is not returns[0]:
            continue
        call = last.value
        if isinstance(call, cst.Name) and len(statements) > 1:
            before = _small(statements[-2])
            if isinstance(before, cst.Assign) and len(before.targets) == 1 and isinstance(
                    before.targets[0].target, cst.Name) and before.targets[0].target.value == call.value:
                call = before.value
        if isinstance(call, cst.Call) and source.imports.resolve(call.func) == SEQUENTIAL:
            found[name] = (function, call)
    return found


def _small(statement):
    return statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else \
        None


def requested_factory(source, requested):
    """The name of the Sequential factory to port: the one `--class` names, else (where the file holds no module
    class) the last one no other function of the file calls; None where there is none."""
    if requested is not None:
        return requested if requested not in source.classes and requested in sequential_factories(source) else None
    factories = sequential_factories(source) if not source.classes else None  # (a file of classes: not read)
    if not factories:
        return None
    called = {node.func.value for function in source.functions.values() for node in descendants(function)
              if isinstance(node, cst.Call) and isinstance(node.func, cst.Name)}
    roots = [name for name in factories if name not in called and not name.startswith("_")]
    return roots[-1] if roots else None


def factory_class(source, name, init_args=None):
    """(class name, class text to add to the translated source, ModelEntry) for Sequential factory `name`, or None
    where its parameters cannot all be given by keyword with a default (`*args`, a parameter without one that
    `init_args`, the user's --init-args, does not give either: those given become the defaults)."""
    function, call = sequential_factories(source)[name]
    given = init_args or {}
    params = function.params
    params = params.with_changes(
        params=[_defaulted(p, given) for p in params.params], kwonly_params=[_defaulted(p, given)
                                                                            for p in params.kwonly_params])
    if params.star_arg is not cst.MaybeSentinel.DEFAULT and params.star_arg is not None or params.star_kwarg or \
            params.posonly_params or any(p.default is None for p in (*params.params, *params.kwonly_params)):
        return None
    class_name = "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) or "Model"
    while class_name in source.classes or class_name in source.functions:
        class_name += "_"
    own_params = [*params.params, *params.kwonly_params]
    statements = function.body.body
    body = statements[:-1]
    if isinstance(_small(statements[-1]).value, cst.Name):  # `model = nn.Sequential(...)`, `return model`
        body = statements[:-2]
    lines = [node_code(statement).strip("\n") for statement in body]
    arguments = ", ".join(node_code(arg).strip().rstrip(",") for arg in call.args)
    text = (f"\n\nclass {class_name}({node_code(call.func)}):\n"
            f'    """The model {name}() builds (porter: its statements as this constructor)."""\n\n'
            f"    def __init__({', '.join(['self', *([node_code(params).strip()] if own_params else [])])}):\n"
            + "".join(textwrap.indent(textwrap.dedent(line), "        ") + "\n" for line in lines)
            + f"        super().__init__({arguments})\n")
    own = [(p.name.value, node_code(p.default).strip()) for p in (*params.params, *params.kwonly_params)]
    bindings = top_level_bindings(source.module)
    names = free_names([p.default for p in (*params.params, *params.kwonly_params)])
    entry = ModelEntry(name, class_name, source.line_of(function),
                       arguments=tuple(f"{parameter}={parameter}" for parameter, _ in own),
                       names=frozenset(n for n in names if n in bindings), parameters=tuple(own),
                       positional=len(params.params), reads=frozenset(names))
    return class_name, text, entry


def _defaulted(param, given):
    """`param` with the value --init-args gives it as its default (JSON values are Python literals)."""
    if param.name.value not in given:
        return param
    return param.with_changes(default=cst.parse_expression(repr(given[param.name.value])),
                              equal=cst.AssignEqual() if param.default is None else param.equal)
