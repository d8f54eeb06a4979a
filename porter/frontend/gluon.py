"""The Gluon frontend: MXNet Gluon `Block`/`HybridBlock` classes read as the same class structure torch's
`nn.Module`s give the translator.

What Gluon spells differently is normalised here, once, so that the passes stay framework-neutral:
- `hybrid_forward(self, F, x, ...)` is the class's forward; `F` (a parameter naming `mx.nd` or `mx.sym`) becomes
  an alias of the op namespace `mxnet.ndarray`, whose rules live in porter/rules/gluon_*.py;
- `with self.name_scope():` (and `with self.features.name_scope():`) only name parameters in mxnet: their bodies
  are read as if they were written without the `with`; `for cell in self.stage._children.values()` iterates the
  container itself (its children in the order they were added);
- helpers handed the op namespace (`self.channel_shuffle(F, x)`, `super().hybrid_forward(F, x)`) take it no
  more: gluon_namespace.py;
- a Block's own parameters (`self.weight = self.params.get("weight", shape=..., init=...)`, `gluon.Parameter(...)`,
  `self.params.get_constant(...)`) are what mxnet passes to `hybrid_forward` by keyword after the inputs: those
  parameters of hybrid_forward become `weight = self.weight` at the top of the body, and `self.weight.data()`
  (Gluon 2 style `forward`) reads as `self.weight`; `self.params.get(...)` itself is read as a call of
  `mxnet.gluon.Parameter` (`get_constant`: `mxnet.gluon.Constant`), whose rules live in porter/rules/gluon_ops.py.
Module-level functions that build and return a Block (model-zoo factories such as `get_resnet(version,
num_layers, **kwargs)` and `resnet18_v1(**kwargs)`, found through locals and module-level tables of classes) are
model code: the port carries them with their tables, without their pretrained-weights download (`model_factories`,
`without_pretrained`), and mxnet data literals (`mx.nd.array([...])`) give example inputs.
The rewritten nodes take the source positions of the nodes they replace, so lines stay the source's.
"""

import libcst as cst

from porter.frontend.arguments import parameter_of
from porter.frontend.gluon_namespace import DEFAULT_NAMES, without_namespace_arguments
from porter.frontend.gluon_runtime_calls import without_runtime_calls
from porter.frontend.imports import dotted_name
from porter.frontend.walk import walk

# Canonical ids (after imports.CANONICAL_PREFIXES) of the classes a Gluon model class derives from.
BLOCK_BASES = {"mxnet.gluon.Block", "mxnet.gluon.HybridBlock", "mxnet.gluon.nn.Block",
               "mxnet.gluon.nn.HybridBlock"}
CONTAINER_BASES = {"mxnet.gluon.nn.Sequential": "sequential", "mxnet.gluon.nn.HybridSequential": "sequential"}
OP_NAMESPACE = "mxnet.ndarray"  # what `F` in hybrid_forward, `mx.nd` and `mx.sym` resolve to
PARAMETER = "mxnet.gluon.Parameter"
CONSTANT = "mxnet.gluon.Constant"
PARAMETER_CLASSES = {PARAMETER, CONSTANT, "mxnet.gluon.parameter.Parameter", "mxnet.gluon.parameter.Constant"}
# the names `self.params.get(...)`/`self.params.get_constant(...)` are rewritten to call (import aliases of the
# parameter classes, registered in the file's import table; never emitted: the rules write the port's code)
PARAMS_GET = {"get": ("porter_gluon_params_get__", PARAMETER),
              "get_constant": ("porter_gluon_params_get_constant__", CONSTANT)}


def is_gluon(canonical):
    return canonical is not None and (canonical == "mxnet" or canonical.startswith("mxnet."))


def op_namespace_parameter(method):
    """The name of hybrid_forward's op-namespace parameter (`F`), or None."""
    params = list(method.params.params)
    return params[1].name.value if len(params) > 1 else None


def normalised_methods(methods, positions, imports=None, inherited_inits=()):
    """Gluon methods as the translator reads them: `hybrid_forward` as `forward` without its `F` parameter (a
    class defining `forward` itself keeps it) and with the Block's own parameters (its `__init__`'s and those of
    `inherited_inits`, its in-file bases' constructors) read from `self`, `name_scope` blocks unwrapped,
    `self.params.get(...)` as a parameter construction and `self.<parameter>.data()` as the parameter.
    `positions` gains the new nodes; `imports` (the file's ImportTable) the parameter aliases."""
    if imports is not None:
        for alias, canonical in PARAMS_GET.values():
            imports.aliases.setdefault(alias, canonical)
    parameters = _own_parameters(methods.get("__init__"), imports).union(
        *(_own_parameters(init, imports) for init in inherited_inits))
    result = {}
    own_namespace = op_namespace_parameter(methods["hybrid_forward"]) if "hybrid_forward" in methods else None
    namespace_names = DEFAULT_NAMES | ({own_namespace} if own_namespace else set())
    for name, method in methods.items():
        method = _unwrap_name_scopes(method, positions)
        method = _children_as_container(method, positions)
        method = without_runtime_calls(method, positions, methods, imports)
        if name != "__init__":  # helpers take the namespace as hybrid_forward passes it (`self.shuffle(F, x)`)
            method, dropped = without_namespace_arguments(method, namespace_names, positions,
                                                          own_namespace if name == "hybrid_forward" else None)
            _namespace_aliases(imports, dropped)
        method = _rewrite(method, positions, _ParameterReads(parameters, positions))
        if name == "hybrid_forward":
            if "forward" in methods:
                continue
            params = list(method.params.params)
            kept = [params[0]] + params[2:] if len(params) > 1 else params
            keyword_only = list(method.params.kwonly_params)  # `def hybrid_forward(self, F, x, *, weight)`
            taken = [p for p in kept[1:] + keyword_only if p.name.value in parameters]
            kept = [p for p in kept if p not in taken]
            keyword_only = [p for p in keyword_only if p not in taken]
            for group in (kept, keyword_only):
                if group and taken:  # the list's last comma goes with the parameters dropped after it
                    group[-1] = group[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            star = method.params.star_arg
            if isinstance(star, cst.ParamStar) and not keyword_only:  # a bare `*` needs keyword-only parameters
                star = cst.MaybeSentinel.DEFAULT
            signature = method.params.with_changes(params=kept, kwonly_params=keyword_only, star_arg=star)
            renamed = method.with_changes(name=cst.Name("forward"), params=signature,
                                          body=_read_parameters_first(method.body, taken, positions))
            positions[renamed] = positions.get(method)
            name, method = "forward", renamed
        result[name] = method
    return result


def is_parameter_construction(call, imports):
    """Whether `call` builds a Gluon Parameter: `self.params.get(...)`, `self.params.get_constant(...)`,
    `gluon.Parameter(...)` or `gluon.Constant(...)` however imported."""
    if not isinstance(call, cst.Call):
        return False
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in PARAMS_GET and dotted_name(func.value) == "self.params":
        return True
    return imports is not None and imports.resolve(func) in PARAMETER_CLASSES


def _own_parameters(init, imports):
    """Attribute names `__init__` assigns Gluon Parameters to (`self.weight = self.params.get("weight", ...)`)."""
    if init is None:
        return frozenset()
    found = set()

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node):
            if is_parameter_construction(node.value, imports):
                for target in node.targets:
                    name = dotted_name(target.target)
                    if name is not None and name.startswith("self.") and name.count(".") == 1:
                        found.add(name[5:])

    walk(init, Finder())
    return frozenset(found)


class _PositionKeeping(cst.CSTTransformer):
    """A transformer whose new nodes take the source position of the nodes they replace (`self.positions`)."""

    def __init__(self, positions):
        super().__init__()
        self.positions = positions

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        if result is not original and isinstance(result, cst.CSTNode) and original in self.positions:
            self.positions.setdefault(result, self.positions[original])
        return result


class _ParameterReads(_PositionKeeping):
    """`self.params.get(...)` -> a call of the Parameter alias; `self.<parameter>.data(...)` -> `self.<parameter>`."""

    def __init__(self, parameters, positions):
        super().__init__(positions)
        self.parameters = parameters

    def leave_Call(self, original, updated):
        func = updated.func
        if not isinstance(func, cst.Attribute):
            return updated
        if func.attr.value in PARAMS_GET and dotted_name(func.value) == "self.params":
            return updated.with_changes(func=cst.Name(PARAMS_GET[func.attr.value][0]))
        if func.attr.value == "data" and len(updated.args) <= 1:  # `.data()`, `.data(ctx)`
            name = dotted_name(func.value)
            if name is not None and name.startswith("self.") and name[5:] in self.parameters:
                return func.value
        return updated


def _rewrite(method, positions, transformer):
    return method.visit(transformer) if _mentions_parameters(method) else method


def _mentions_parameters(method):
    text = cst.Module(body=[]).code_for_node(method)
    return "self.params." in text or ".data(" in text


def _read_parameters_first(body, taken, positions):
    """hybrid_forward's body with `name = self.name` first (after a docstring) for each parameter in `taken`."""
    if not taken or not isinstance(body, cst.IndentedBlock):
        return body
    reads = []
    for param in taken:
        name = param.name.value
        statement = cst.SimpleStatementLine(body=[cst.Assign(
            targets=[cst.AssignTarget(target=cst.Name(name))],
            value=cst.Attribute(value=cst.Name("self"), attr=cst.Name(name)))])
        position = positions.get(param)
        if position is not None:
            positions[statement] = position
            for node in (statement.body[0], statement.body[0].value, statement.body[0].targets[0].target):
                positions[node] = position
        reads.append(statement)
    statements = list(body.body)
    first = statements[0] if statements else None
    docstring = isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr) and isinstance(
        first.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    index = 1 if docstring else 0
    return body.with_changes(body=statements[:index] + reads + statements[index:])


def _is_name_scope(item):
    call = item.item
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
        call.func.attr.value == "name_scope" and not call.args and dotted_name(call.func.value) is not None


class _NameScopeUnwrapper(_PositionKeeping):
    """Replaces `with <x>.name_scope():` statements by their bodies; new nodes inherit the old positions."""

    def leave_With(self, original, updated):
        if len(updated.items) == 1 and _is_name_scope(updated.items[0]) and \
                isinstance(updated.body, cst.IndentedBlock):
            return cst.FlattenSentinel(updated.body.body)
        return updated


class _ChildrenValues(_PositionKeeping):
    """`self.stage._children.values()` -> `self.stage`: a Block's children in the order they were added, which is
    what iterating the container gives in the port."""

    def leave_Call(self, original, updated):
        func = updated.func
        if isinstance(func, cst.Attribute) and func.attr.value == "values" and not updated.args and isinstance(
                func.value, cst.Attribute) and func.value.attr.value == "_children":
            return func.value.value
        return updated


def _children_as_container(method, positions):
    if "._children.values()" not in cst.Module(body=[]).code_for_node(method):
        return method
    return method.visit(_ChildrenValues(positions))


def _unwrap_name_scopes(method, positions):
    if not _mentions_name_scope(method):
        return method
    return method.visit(_NameScopeUnwrapper(positions))


def _mentions_name_scope(method):
    found = []

    class Finder(cst.CSTVisitor):
        def visit_With(self, node):
            if any(_is_name_scope(item) for item in node.items):
                found.append(node)

    walk(method, Finder())
    return bool(found)


# --- model-zoo factories -------------------------------------------------------------------------------------------
# Calls in a factory body that make it training code rather than a model factory.
TRAINING_CALLS = {"backward", "step", "record", "fit", "train"}
# Where pretrained weights come from in model-zoo factories (`if pretrained: net.load_parameters(...)`).
WEIGHT_LOADERS = {"load_parameters", "load_params", "get_model_file"}
# Block methods that only matter to mxnet's runtime (a factory's `net.initialize(ctx=ctx)`, `net.hybridize()`): the
# port's layers make their weights themselves and are compiled by tf.function/XLA
MXNET_RUNTIME_CALLS = {"initialize", "hybridize", "reset_ctx"}


def model_factories(functions, classes, module):
    """Module-level functions that build and return a model: every `return` gives an in-file Block class's
    instance, made directly (`return ResNet(...)`), through a local (`net = resnet_class(block, ...)`), through a
    module-level table of classes (`resnet_class = resnet_net_versions[version - 1]`), or by another factory
    (`def resnet8_v1(**kwargs): return get_resnet(1, 8, **kwargs)`). name -> the class it builds: the table's entry
    the literal arguments pick (`resnet18_v2()` calling `get_resnet(2, 18)`: ResNetV2), else the table's first."""
    reader = _FactoryReader(functions, classes, _top_level_values(module))
    found = {name: reader.built(function, {}, ()) for name, function in functions.items()}
    return {name: built for name, built in found.items() if built is not None}


def _top_level_values(module):
    values = {}
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                        small.targets[0].target, cst.Name):
                    values[small.targets[0].target.value] = small.value
    return values


def _locals_of(function):
    """(returned expressions, local name -> assigned expressions, calls that make it training code)."""
    returns, assigned, training = [], {}, []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            return node is function

        def visit_ClassDef(self, node):
            return False

        def visit_Return(self, node):
            returns.append(node.value)

        def visit_Assign(self, node):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    assigned.setdefault(target.target.value, []).append(node.value)

        def visit_Call(self, node):
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in TRAINING_CALLS:
                training.append(node)

    walk(function, Finder())
    return returns, assigned, training


class _FactoryReader:
    """Follows what a function returns to the in-file class it builds, with the literal values its parameters
    are known to hold (`bindings`) picking entries of module-level tables."""

    def __init__(self, functions, classes, tables):
        self.functions, self.classes, self.tables = functions, classes, tables

    def built(self, function, bindings, active):
        name = function.name.value
        if name in active or len(active) > 8:
            return None
        returns, assigned, training = _locals_of(function)
        if not returns or training or any(value is None for value in returns):
            return None
        bindings = {**_literal_defaults(function), **bindings}
        found = [self.instance(value, assigned, bindings, active + (name,), set()) for value in returns]
        return found[0] if all(found) else None

    def instance(self, node, assigned, bindings, active, seen):
        """The in-file class `node` (an expression of the function) is an instance of, or None."""
        if isinstance(node, cst.Name):
            values = assigned.get(node.value)
            if not values or node.value in seen:
                return None
            found = [self.instance(v, assigned, bindings, active, seen | {node.value}) for v in values]
            return found[0] if all(found) else None
        if not isinstance(node, cst.Call):
            return None
        name = dotted_name(node.func)
        if name in self.functions:
            callee = self.functions[name]
            return self.built(callee, _bound_literals(callee, node, bindings), active)
        found = _class_of(node.func, self.classes, self.tables, assigned, set(), bindings)
        return found[0] if found else None


def _literal_defaults(function):
    values = {}
    for param in function.params.params:
        if param.default is not None:
            value = _evaluated(param.default, {})
            if value is not None:
                values[param.name.value] = value
    return values


def _bound_literals(function, call, bindings):
    """The literal values `call` hands `function`'s parameters (through the caller's own known values)."""
    names = [p.name.value for p in function.params.params]
    values = {}
    for position, arg in enumerate(call.args):
        name = parameter_of(arg, position, names)
        value = _evaluated(arg.value, bindings)
        if name is not None and value is not None:
            values[name] = value
    return values


def _evaluated(node, bindings):
    """The int or str value of a literal or simple integer arithmetic over known names; None otherwise."""
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.Name):
        return bindings.get(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _evaluated(node.expression, bindings)
        return -inner if isinstance(inner, int) else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply)):
        left, right = _evaluated(node.left, bindings), _evaluated(node.right, bindings)
        if isinstance(left, int) and isinstance(right, int):
            return {cst.Add: left + right, cst.Subtract: left - right,
                    cst.Multiply: left * right}[type(node.operator)]
    return None


def _class_of(node, classes, tables, assigned, seen, bindings=None):
    """The in-file classes an expression naming a class may stand for: a class name, a local or module-level
    table of classes (list, tuple, dict values), an item of one (the item a known index picks). Empty when it may
    be something else."""
    if isinstance(node, cst.Name):
        if node.value in classes:
            return [node.value]
        if node.value in seen:
            return []
        seen = seen | {node.value}
        values = assigned.get(node.value) or ([tables[node.value]] if node.value in tables else [])
        found = [_class_of(v, classes, tables, assigned, seen, bindings) for v in values]
        return [c for f in found for c in f] if found and all(found) else []
    if isinstance(node, cst.Subscript):
        picked = _picked(node, tables, assigned, bindings or {})
        if picked is not None:
            return _class_of(picked, classes, tables, assigned, seen, bindings)
        return _class_of(node.value, classes, tables, assigned, seen, bindings)
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        found = [_class_of(e.value, classes, tables, assigned, seen, bindings) for e in node.elements]
        return [c for f in found for c in f] if found and all(found) else []
    if isinstance(node, cst.Dict):
        found = [_class_of(e.value, classes, tables, assigned, seen, bindings) for e in node.elements
                 if isinstance(e, cst.DictElement)]
        return [c for f in found for c in f] if found and all(found) else []
    return []


def _picked(node, tables, assigned, bindings):
    """The element `table[index]` names when the table is a literal list/tuple/dict (through names) and the index
    a known value; None otherwise."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    index = _evaluated(node.slice[0].slice.value, bindings)
    table = node.value
    for _ in range(8):
        if isinstance(table, cst.Subscript):
            table = _picked(table, tables, assigned, bindings)
        elif isinstance(table, cst.Name):
            values = assigned.get(table.value) or ([tables[table.value]] if table.value in tables else [])
            table = values[0] if len(values) == 1 else None
        else:
            break
    if index is None or table is None:
        return None
    if isinstance(table, (cst.List, cst.Tuple)) and isinstance(index, int) and -len(table.elements) <= index < len(
            table.elements):
        return table.elements[index].value
    if isinstance(table, cst.Dict):
        for element in table.elements:
            if isinstance(element, cst.DictElement) and _evaluated(element.key, {}) == index:
                return element.value
    return None


def normalised_function(function, positions, imports, factory):
    """A module-level function of a Gluon file as the translator reads it: `name_scope` blocks unwrapped (as in
    methods) and, for a model factory, without its pretrained-weights branch (`without_pretrained`)."""
    function = _unwrap_name_scopes(function, positions)
    function, dropped = without_namespace_arguments(function, DEFAULT_NAMES, positions)
    _namespace_aliases(imports, dropped)
    return without_pretrained(function, imports, positions) if factory else function


def _namespace_aliases(imports, names):
    """A helper's op-namespace parameters (`def channel_shuffle(self, F, x)`) name the op namespace in its body."""
    if imports is not None:
        for name in names:
            imports.aliases.setdefault(name, OP_NAMESPACE)


def without_pretrained(function, imports, positions):
    """A model-zoo factory as the port carries it: parameter defaults that reach into mxnet or the file system
    (`ctx=cpu()`, `root=os.path.join(base.data_dir(), 'models')`) become None, a branch that loads pretrained
    weights (`if pretrained: net.load_parameters(get_model_file(...))`) raises a clear error instead, and calls
    only mxnet's runtime needs (`net.initialize(ctx=ctx)`, `net.hybridize()`) are dropped."""
    transformer = _PretrainedRemover(imports, positions)
    return function.visit(transformer) if _mentions_weights_or_context(function, imports) else function


def _foreign(node, imports):
    """Whether `node` mentions a name imported from mxnet or os (the model's port imports neither) that no layer
    rule translates (`norm_layer=BatchNorm` stays: it names the port's BatchNorm)."""
    from porter.rules.registry import load_all_rules

    layers = load_all_rules()[0]
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Name(self, name):
            canonical = imports.resolve(name)
            if canonical is not None and canonical not in layers and (
                    is_gluon(canonical) or canonical == "os" or canonical.startswith("os.")):
                found.append(name)

    walk(node, Finder())
    return bool(found)


def _loads_weights(node, imports):
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, call):
            name = call.func.attr.value if isinstance(call.func, cst.Attribute) else dotted_name(call.func)
            if name in WEIGHT_LOADERS:
                found.append(call)

    walk(node, Finder())
    return bool(found)


def _mentions_weights_or_context(function, imports):
    return any(p.default is not None and _foreign(p.default, imports) for p in function.params.params) or any(
        isinstance(s, cst.If) and _loads_weights(s.body, imports) or _mxnet_runtime_call(s)
        for s in function.body.body)


def _mxnet_runtime_call(statement):
    """`net.initialize(...)`, `net.hybridize()`, `net.collect_params().reset_ctx(ctx)` as a statement."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1 or not isinstance(
            statement.body[0], cst.Expr):
        return False
    call = statement.body[0].value
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
        call.func.attr.value in MXNET_RUNTIME_CALLS


class _PretrainedRemover(_PositionKeeping):
    def __init__(self, imports, positions):
        super().__init__(positions)
        self.imports = imports

    def visit_FunctionDef(self, node):
        return True

    def leave_Param(self, original, updated):
        if updated.default is not None and _foreign(updated.default, self.imports):
            return updated.with_changes(default=cst.Name("None"))
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        return cst.RemovalSentinel.REMOVE if _mxnet_runtime_call(original) else updated

    def leave_IndentedBlock(self, original, updated):
        if not updated.body:  # every statement was an mxnet runtime call
            return updated.with_changes(body=[cst.SimpleStatementLine(body=[cst.Pass()])])
        return updated

    def leave_If(self, original, updated):
        if not _loads_weights(original.body, self.imports):
            return updated
        flag = cst.Module(body=[]).code_for_node(original.test)
        message = (f"{flag}: the port does not download mxnet's pretrained weights; build the model without them "
                   f"and load a .params file (porter convert --weights FILE writes it as Keras weights)")
        statement = cst.SimpleStatementLine(body=[cst.Raise(exc=cst.Call(
            func=cst.Name("NotImplementedError"), args=[cst.Arg(cst.SimpleString(repr(message)))]))])
        position = self.positions.get(original.body.body[0] if original.body.body else original)
        if position is not None:
            self.positions[statement] = position
            self.positions[statement.body[0]] = position
        return updated.with_changes(body=updated.body.with_changes(body=[statement]))


# --- example inputs from mxnet data code ---------------------------------------------------------------------------
def literal_array_example(call):
    """`mx.nd.array([6, 3, 1, 5])` (a literal, possibly nested list, `dtype=` optional) fed to a model: (shape
    without the batch, dtype, low, high) with the literal's value range (floats: [min, max]; integers: [min, max + 1)),
    or None when the data is not a literal."""
    import ast

    import numpy as np

    args = [a.value for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    source = args[0] if args else keywords.get("source_array")
    if source is None:
        return None
    code = cst.Module(body=[]).code_for_node
    try:
        values = np.asarray(ast.literal_eval(code(source)))
        dtype = ast.literal_eval(code(keywords["dtype"])) if "dtype" in keywords else "float32"
    except (ValueError, SyntaxError, TypeError):
        return None
    if values.ndim == 0 or values.size == 0 or values.dtype.kind not in "iuf" or not isinstance(dtype, str):
        return None
    low, high = values.min().item(), values.max().item()
    if dtype.startswith(("int", "uint")):
        low, high = int(low), int(high) + 1
    else:
        low, high = float(low), float(high)
    return list(values.shape[1:]), dtype, low, high


def table_calls(call, function, classes, module):
    """`resnet_class(block_class, layers, channels)` inside a model-zoo factory, where locals taken from module-level
    tables (`resnet_class = resnet_net_versions[version - 1]`) stand for in-file classes: the calls it may be, with
    those names replaced by the classes' (one call per class a table offers), as the translator's scan of
    constructions reads them to learn which block class a model is built with. [] when the callee is no class."""
    assigned = {}

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    assigned.setdefault(target.target.value, []).append(node.value)

    walk(function, Finder())
    tables = _top_level_values(module)
    callees = [c for c in dict.fromkeys(_class_of(call.func, classes, tables, assigned, set()))]
    if not callees or isinstance(call.func, cst.Name) and call.func.value in classes:
        return []
    alternatives = [list(dict.fromkeys(_class_of(arg.value, classes, tables, assigned, set())))
                    if isinstance(arg.value, cst.Name) and arg.value.value not in classes and not arg.star else []
                    for arg in call.args]

    def variant(callee, chosen):
        args = [arg.with_changes(value=cst.Name(chosen[i])) if chosen[i] else arg for i, arg in enumerate(call.args)]
        return call.with_changes(func=cst.Name(callee), args=args)

    first = [options[0] if options else None for options in alternatives]
    calls = []
    for callee in callees:
        calls.append(variant(callee, first))
        for index, options in enumerate(alternatives):
            for option in options[1:]:
                calls.append(variant(callee, first[:index] + [option] + first[index + 1:]))
    return calls
