"""Which top-level names a module binds and which names a piece of code uses (shared by the source reader and
the linker)."""

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.walk import descendants, walk


def names_in(node):
    """Every plain name `node` mentions (reads, writes, attribute names alike)."""
    names = set()

    class Collector(cst.CSTVisitor):
        def visit_Name(self, name):
            names.add(name.value)

    walk(node, Collector())
    return names


def read_names(node):
    """Plain names `node` reads or binds, an attribute's own name aside (`nn.LayerNorm` reads `nn` only)."""
    names = set()

    class Collector(cst.CSTVisitor):
        def visit_Name(self, name):
            names.add(name.value)

        def visit_Attribute(self, attribute):
            walk(attribute.value, self)
            return False

    walk(node, Collector())
    return names


def bound_names(statement):
    """Names a top-level statement binds: a `def`/`class` name, or plain assignment targets."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return [statement.name.value]
    return assigned_names(statement) if isinstance(statement, cst.SimpleStatementLine) else []


def assignment_targets(small):
    """The targets a small statement assigns: each of `A = B = ...`, the one of `x += ...` and `x: int = ...`; none
    for any other statement."""
    if isinstance(small, cst.Assign):
        return [t.target for t in small.targets]
    return [small.target] if isinstance(small, (cst.AugAssign, cst.AnnAssign)) else []


def assigned_names(statement):
    """Plain names a simple statement line assigns (`A = B = ...`, `x: int = ...`, `a, b = ...`)."""
    names = []
    for small in statement.body:
        targets = ([t.target for t in small.targets] if isinstance(small, cst.Assign) else
                   [small.target] if isinstance(small, cst.AnnAssign) else [])
        for target in targets:
            elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
            names.extend(e.value for e in elements if isinstance(e, cst.Name))
    return names


def mutated_names(statement):
    """Plain names whose item or attribute a simple statement line assigns (`SPEC['w18'] = [...]`, `CFG.depth = 3`):
    a table filled entry by entry after `SPEC = {}` (GluonCV's HRNET_SPEC)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return []
    names = []
    for small in statement.body:
        targets = ([t.target for t in small.targets] if isinstance(small, cst.Assign) else
                   [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else [])
        for target in targets:
            if isinstance(target, cst.Attribute) and target.attr.value.startswith("__"):
                continue  # `Outputs.__annotations__ = {...: Tensor}`: metadata for TorchScript, not model data
            if isinstance(target, (cst.Subscript, cst.Attribute)) and isinstance(target.value, cst.Name):
                names.append(target.value.value)
    return names


def top_level_bindings(module):
    """name -> the top-level statements that bind it: `def`, `class` and assignments to plain names, and the
    statements that then fill it in (mutated_names, registered_names). Read once per module (the linker and the
    factory reader ask thousands of times a conversion); the result is shared: callers only read it."""
    return once_per_module(_top_level_bindings, module)


def once_per_module(read, module):
    """`read(module)`, kept for the (immutable) module object while it is among the last ones read."""
    key = (read, id(module))
    kept = _READ.get(key)
    if kept is None or kept[0] is not module:
        if len(_READ) > 256:
            _READ.clear()
        kept = _READ[key] = (module, read(module))
    return kept[1]


_READ = {}  # (reader, id(module)) -> (module, what it read): the module kept, so its id is not reused meanwhile


def _top_level_bindings(module):
    bindings = {}
    for statement in module.body:
        for name in bound_names(statement) + mutated_names(statement):
            bindings.setdefault(name, []).append(statement)
    assigned = {name for name, statements in bindings.items()
                if any(not _is_import_line(statement) for statement in statements)}
    registrars = registrar_functions(module)
    for statement in module.body:
        for name in registered_names(statement, registrars):
            if name in assigned and statement not in bindings[name]:
                bindings[name].append(statement)
    return bindings


def registered_names(statement, registrars=None):
    """Plain names a top-level statement registers into by calling a method of it: a definition decorated by one
    (MONAI's `@Conv.factory_function("conv") def conv_factory(dim): ...` filling the `Conv = LayerFactory(...)` that
    `Conv[Conv.CONV, 2]` reads) or a call of one (`Act.add_factory_class("elu", nn.ELU)`), or by calling a function
    of `registrars` (`registrar_functions`: timm's `register_block("mobilevit", MobileVitBlock)` filling byobnet's
    `_block_registry`). Bare decorators (`@register_model`) and names bound only by imports register nothing here
    (top_level_bindings)."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        calls = [d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator for d in statement.decorators]
    elif isinstance(statement, cst.SimpleStatementLine):
        calls = [small.value.func for small in statement.body
                 if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)]
    else:
        return []
    names = [call.value.value for call in calls if isinstance(call, cst.Attribute) and isinstance(call.value, cst.Name)]
    if registrars and isinstance(statement, cst.SimpleStatementLine):
        names.extend(name for call in calls if isinstance(call, cst.Name) for name in registrars.get(call.value, ()))
    return names


def registrar_functions(module):
    """{module-level function: the module-level names it fills by key} for the functions that store into a table
    they do not bind themselves (`def register_block(block_type, fn): _block_registry[block_type] = fn`)."""
    return once_per_module(_registrar_functions, module)


def _registrar_functions(module):
    found = {}
    for statement in module.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        own = {p.name.value for p in (*statement.params.params, *statement.params.kwonly_params,
                                      *statement.params.posonly_params)}
        stored = []

        class Finder(cst.CSTVisitor):
            def visit_AssignTarget(self, node):
                if isinstance(node.target, cst.Name):
                    own.add(node.target.value)
                elif isinstance(node.target, cst.Subscript) and isinstance(node.target.value, cst.Name):
                    stored.append(node.target.value.value)

        walk(statement.body, Finder())
        names = sorted(set(stored) - own)
        if names:
            found[statement.name.value] = names
    return found


def _is_import_line(statement):
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)



EMPTY_DICT_CALLS = frozenset({"dict", "OrderedDict", "collections.OrderedDict"})


def keyed_depth(body, name):
    """How many keys every use of variable `name` in `body` (a function body) takes, where it is bound once there to
    an empty table and used only through keys: `d = {}` then `d[key]` (depth 1), `outs = [None] * n` then
    `outs[i]` (1), `grid = [[None] * n for _ in range(m)]` then `grid[i][j]` (2), read or stored, each use with
    all of the table's keys (the table is never handed on or iterated; a table of depth 1 may be returned whole,
    `return out`, as torchvision's IntermediateLayerGetter returns its features); None otherwise."""
    keyed, depth, subscripts, returned = set(), None, [], False
    for node in descendants(body):
        if isinstance(node, cst.Return) and isinstance(node.value, cst.Name) and node.value.value == name:
            keyed.add(id(node.value))
            returned = True
        if isinstance(node, cst.Subscript):
            subscripts.append(node)
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == name:
            keyed.add(id(node.value))
        elif isinstance(node, (cst.Attribute, cst.Arg)):
            keyed.add(id(node.attr if isinstance(node, cst.Attribute) else node.keyword))  # (not the variable)
        elif isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                                  for t in node.targets):
            if depth is not None or len(node.targets) != 1:
                return None
            depth = empty_table_depth(node.value)
            if depth is None:
                return None
            keyed.add(id(node.targets[0].target))
        elif isinstance(node, cst.Name) and node.value == name and id(node) not in keyed:
            return None
    if depth is None or returned and depth != 1:
        return None
    inner = {id(node.value) for node in subscripts if isinstance(node.value, cst.Subscript)}
    for node in subscripts:  # each outermost subscript chain on `name` takes exactly `depth` keys
        if id(node) in inner:
            continue
        chain, keys, current = 0, 0, node
        while isinstance(current, cst.Subscript):
            chain += 1
            keys += len(current.slice) == 1 and isinstance(current.slice[0].slice, cst.Index)
            current = current.value
        if isinstance(current, cst.Name) and current.value == name and not chain == keys == depth:
            return None  # (a slice, a partial read, a key too many)
    return depth


def empty_table_depth(node):
    """1 for `{}`, `dict()`, `OrderedDict()`, `[None] * n` and `[None for ...]`; one more for each list
    comprehension of such a table (`[[None] * n for _ in range(m)]`); None for anything else."""
    if isinstance(node, cst.Dict) and not node.elements or isinstance(node, cst.Call) and not node.args and \
            dotted_name(node.func) in EMPTY_DICT_CALLS:
        return 1
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
        for side in (node.left, node.right):
            if isinstance(side, cst.List) and len(side.elements) == 1 and \
                    isinstance(side.elements[0].value, cst.Name) and side.elements[0].value.value == "None":
                return 1
    if isinstance(node, cst.ListComp):
        if isinstance(node.elt, cst.Name) and node.elt.value == "None":
            return 1
        inner = empty_table_depth(node.elt)
        return inner + 1 if inner is not None and not isinstance(node.elt, (cst.Dict, cst.Call)) else None
    return None


def names_bound_in(node, loop_targets=False):
    """The plain names statements anywhere in `node` (a body, a statement) bind: assignment targets, tuple-unpacking
    ones item by item, and with `loop_targets` the targets of `for` loops too."""
    names = set()
    for inner in descendants(node):
        if isinstance(inner, cst.Assign):
            targets = [t.target for t in inner.targets]
        elif isinstance(inner, (cst.AugAssign, cst.AnnAssign)) or loop_targets and isinstance(inner, cst.For):
            targets = [inner.target]
        else:
            continue
        while targets:
            target = targets.pop()
            if isinstance(target, cst.Name):
                names.add(target.value)
            elif isinstance(target, (cst.Tuple, cst.List)):
                targets.extend(element.value for element in target.elements)
    return names


def bound_before_read(body, name):
    """Whether a block's first statement mentioning `name` is a plain assignment binding it without reading it
    (`h, c = hidden[i]` at the top of a loop body: nothing an earlier turn left in `h` is read)."""
    for statement in body.body:
        if name not in names_in(statement):
            continue
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1 or \
                not isinstance(statement.body[0], cst.Assign):
            return False
        assign = statement.body[0]
        return name not in names_in(assign.value) and name in assigned_names(statement)
    return False


def dunder_all(module):
    """The names of a module's `__all__ = [...]` (string literals only), or None without one."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine) and "__all__" in bound_names(statement):
            value = statement.body[0].value
            if isinstance(value, (cst.List, cst.Tuple)) and all(
                    isinstance(e.value, cst.SimpleString) for e in value.elements):
                return [e.value.evaluated_value for e in value.elements]
    return None


def target_names(target):
    """The plain names an assignment or loop target binds (`x`, `a, (b, c)`, `[a, b]`)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in target_names(element.value)]
    return []


def dict_never_changed(body, name):
    """Whether variable `name` is bound once in `body` (a function body), by a plain assignment, and the dict it
    holds is never changed there: no item stored or deleted by key (`d[k] = v`, `del d[k]`), no changing method
    (`d.update(...)`, `d.pop(k)`); reading it, by key or whole, and handing it on are fine."""
    stored, bindings = set(), 0
    for node in descendants(body):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del)):
            stored.add(id(node.target))
    for node in descendants(body):
        if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name) and node.target.value == name:
            bindings += 1
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.WithItem, cst.NamedExpr)) and \
                name in names_in(getattr(node, "target", None) or getattr(node, "asname", None) or cst.Name("_")):
            return False  # (rebound otherwise)
        elif _changes(node, name, stored):
            return False
    return bindings == 1


def _changes(node, name, stored):
    """Whether `node` changes the dict variable `name` holds: an item stored or deleted by key (`stored`: the ids of
    the body's store targets), or a changing method named (`d.update`)."""
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == name:
        return id(node) in stored
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == name and \
        node.attr.value in DICT_CHANGING_METHODS


DICT_CHANGING_METHODS = frozenset({"update", "pop", "popitem", "setdefault", "clear", "__setitem__", "__delitem__"})
