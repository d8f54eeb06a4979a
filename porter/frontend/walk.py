"""Walk a libcst tree with a read-only visitor without rebuilding it.

`node.visit(visitor)` rebuilds every node it passes, even for a `CSTVisitor` that changes nothing: each node's
`_visit_and_replace_children` constructs and validates a copy. On a 3,500-line file that was most of a walk's
time. `walk(node, visitor)` calls the same hooks (`on_visit`, and `on_leave` after the children) on the same nodes
in the same order, and builds nothing. It does not call the per-attribute hooks (`visit_Call_func`), which porter's
visitors do not define.
"""

import dataclasses

import libcst as cst

_CHILD_FIELDS = {}  # node class -> its field names, those libcst visits first and in libcst's visit order
# value type -> whether it is a libcst node class: libcst's nodes are ABCs, and `isinstance(value, cst.CSTNode)`
# goes through ABCMeta.__instancecheck__ for every field of every node (a third of a walk's time)
NODE_TYPES = {}


def is_node_type(kind):
    """Whether values of type `kind` are libcst nodes (cached in NODE_TYPES)."""
    found = NODE_TYPES.get(kind)
    if found is None:
        found = NODE_TYPES[kind] = issubclass(kind, cst.CSTNode)
    return found


class _FieldOrder(cst.CSTVisitor):
    """Records the attribute names libcst visits on one node, in order, without going below it."""

    def __init__(self):
        super().__init__()
        self.names = []

    def on_visit(self, node):
        return False

    def on_leave(self, original_node):
        pass

    def on_visit_attribute(self, node, attribute):
        self.names.append(attribute)

    def on_leave_attribute(self, original_node, attribute):
        pass


def child_fields(node):
    """The names of `node`'s fields that may hold child nodes, in the order libcst visits them.

    The order comes from libcst itself (one shallow visit of the first node of each class), so it is the lexical
    order libcst's own walks use (`IfExp` visits `body` before `test`). A field libcst visits only when it is set
    (an f-string's `format_spec`) is visited last; the other unvisited fields hold plain values (a `Name`'s string).
    """
    kind = type(node)
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        probe = _FieldOrder()
        node._visit_and_replace_children(probe)
        visited = list(dict.fromkeys(probe.names))
        names = _CHILD_FIELDS[kind] = (*visited, *(f.name for f in dataclasses.fields(kind) if f.name not in visited))
    return names


_DEFAULT_ON_VISIT, _DEFAULT_ON_LEAVE = cst.CSTVisitor.on_visit, cst.CSTVisitor.on_leave


def _hooks(visitor_class, node_class):
    """What libcst's `on_visit`/`on_leave` look up by name on every node (`getattr(self, f"visit_{name}")`): the
    visitor class's visit_X and leave_X functions, None for the empty stubs every visitor inherits; found once per
    node class and kept on the visitor class (so a class made per call takes its table with it)."""
    table = visitor_class.__dict__.get("_porter_walk_hooks")
    if table is None:
        table = {}
        type.__setattr__(visitor_class, "_porter_walk_hooks", table)
    found = table.get(node_class)
    if found is None:
        name = node_class.__name__
        hooks = [(getattr(visitor_class, hook, None), getattr(cst.CSTVisitor, hook, None))
                 for hook in (f"visit_{name}", f"leave_{name}")]
        found = table[node_class] = tuple(None if own is stub else own for own, stub in hooks)
    return found


def walk(node, visitor):
    """`node.visit(visitor)` for a visitor that only reads: the same hooks in the same order, no copies made."""
    visitor_class = type(visitor)
    if visitor_class.on_visit is _DEFAULT_ON_VISIT and visitor_class.on_leave is _DEFAULT_ON_LEAVE:
        _walk_hooks(node, visitor, visitor_class, _passed_over(visitor_class))
    else:
        _walk(node, visitor)


def _walk_hooks(node, visitor, visitor_class, passed_over):
    """`walk` for a visitor with libcst's own on_visit/on_leave: its visit_X/leave_X called directly; nodes of
    the types `passed_over` (none of which has a hook) are not entered."""
    visit, leave = _hooks(visitor_class, type(node))
    if visit is None or visit(visitor, node) is not False:
        for child in children(node):
            if type(child) not in passed_over:
                _walk_hooks(child, visitor, visitor_class, passed_over)
    if leave is not None:
        leave(visitor, node)


def _token_node_types():
    """The node types made only of whitespace, comments and one operator or bracket token: they hold no node of
    another kind. Half of a file's nodes."""
    import inspect

    from libcst._nodes import op, whitespace

    found = {kind for module in (op, whitespace) for kind in vars(module).values()
             if inspect.isclass(kind) and issubclass(kind, cst.CSTNode) and kind.__module__ == module.__name__}
    return frozenset(found | {cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
                              cst.LeftCurlyBrace, cst.RightCurlyBrace})


TOKEN_NODES = _token_node_types()
_TOKEN_HOOKS = frozenset(f"{prefix}_{kind.__name__}" for kind in TOKEN_NODES for prefix in ("visit", "leave"))


def _passed_over(visitor_class):
    """TOKEN_NODES for a visitor class with no visit_X/leave_X for any of them (a walk need not enter them: what
    they hold is of the same kinds), else nothing."""
    for klass in visitor_class.__mro__:
        if klass is cst.CSTVisitor:
            break
        if not _TOKEN_HOOKS.isdisjoint(klass.__dict__):
            return frozenset()
    return TOKEN_NODES


def descendants(node):
    """`node` and every node below it, in the order `walk` visits them (pre-order), as a list; whitespace, comment
    and operator nodes (TOKEN_NODES, half of a file's nodes) neither listed nor entered: no question asks for them."""
    found, stack = [], [node]
    pop, push, skipped = stack.pop, stack.append, TOKEN_NODES
    while stack:
        current = pop()
        found.append(current)
        for child in reversed(children(current)):
            if type(child) not in skipped:
                push(child)
    return found


def children(node):
    """The nodes directly below `node`, in libcst's visit order (its fields, lists spread), as a list."""
    try:
        return _CHILDREN[type(node)](node)
    except KeyError:
        return _children_function(node)(node)


# node class -> a function made for it (`_children_function`) that lists the children of one of its nodes
_CHILDREN = {}


def _children_function(node):
    """`children` for nodes of `node`'s class, written out field by field (no loop over the names, no getattr):
    it runs for every node of every walk. Node-ness is looked up per value type (NODE_TYPES), not asked of
    isinstance: libcst's node classes are ABCs."""
    kind = type(node)
    lines = ["def children(node):", "    found = []"]
    for name in child_fields(node):
        lines += [f"    value = node.{name}", "    kind = type(value)", "    if kind is tuple or kind is list:",
                  "        found.extend(value)", "    else:", "        is_node = NODE_TYPES.get(kind)",
                  "        if is_node is None:", "            is_node = is_node_type(kind)", "        if is_node:",
                  "            found.append(value)"]
    lines.append("    return found")
    namespace = {"NODE_TYPES": NODE_TYPES, "is_node_type": is_node_type}
    code = compile("\n".join(lines), f"<porter.frontend.walk children of {kind.__name__}>", "exec")
    exec(code, namespace)  # noqa: S102 - porter's own code, written from libcst's field names (never the input)
    function = _CHILDREN[kind] = namespace["children"]
    return function


def _walk(node, visitor):
    if visitor.on_visit(node):
        for child in children(node):
            _walk(child, visitor)
    visitor.on_leave(node)


def has_escape(body):
    """Whether a block holds `return`, `break` or `continue` (nested functions and classes left out)."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Return(self, node):
            found.append(node)

        def visit_Break(self, node):
            found.append(node)

        def visit_Continue(self, node):
            found.append(node)

        def visit_FunctionDef(self, node):
            return False

        def visit_ClassDef(self, node):
            return False

    walk(body, Finder())
    return bool(found)
