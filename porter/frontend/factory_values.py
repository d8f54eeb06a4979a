"""Values a model factory binds, read as code without running it: bound names substituted into expressions, the
keyword arguments the user may give (the generated factory's `**kwargs`, alone or merged into a dict with keys of
the factory's), and the dicts and lists a factory fills in statement by statement. porter/frontend/factory_reader.py
follows the statements; these say what a value is after each.
"""

import libcst as cst

from porter.frontend.names import target_names
from porter.frontend.walk import descendants, walk

KWARGS = "kwargs"  # the generated factory's keyword-argument parameter
_ATOMIC = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Tuple, cst.Dict, cst.Set, cst.Integer,
           cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


class Unread(Exception):
    """The factory does something this reader does not follow."""


UNKNOWN = object()  # a name bound to something unread


_OWN_KWARGS = "__porter_own_kwargs__"  # (a placeholder while the factory's own names are substituted)


def own_keywords(node, bound, methods=("pop", "get")):
    """`node` bound, its reads of keywords the user may give (`default_keyword_read`, by one of `methods`) made on
    the generated factory's own `kwargs`."""
    return substituted(node.visit(_OwnKeywords(bound, methods)), bound).visit(_Renamed())


class _OwnKeywords(cst.CSTTransformer):
    """`NAME.pop(key)` reads of keywords the user may give made on a placeholder for the factory's own `kwargs`.
    (Module-level transformers: a class made per call has libcst's `isinstance(visitor, CSTVisitor)` walk every
    visitor class still alive: a third of converting timm's efficientnet.py.)"""

    def __init__(self, bound, methods):
        super().__init__()
        self.bound, self.methods = bound, methods

    def leave_Call(self, original, updated):
        if original.func.attr.value not in self.methods if isinstance(original.func, cst.Attribute) else True:
            return updated
        if default_keyword_read(original, self.bound) is None:
            return updated
        return updated.with_changes(func=updated.func.with_changes(value=cst.Name(_OWN_KWARGS)))


class _Renamed(cst.CSTTransformer):
    def leave_Name(self, original, updated):
        return updated.with_changes(value=KWARGS) if original.value == _OWN_KWARGS else updated


def reads_default_keywords(node, bound, methods=("pop", "get")):
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, call):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in methods:
                found.extend(filter(None, [default_keyword_read(call, bound)]))

    walk(node, Finder())
    return bool(found)


def string_key_target(small):
    """The target of `small` when it is `NAME["key"] = value` (one target, a string key), else None."""
    target = small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
    if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and len(target.slice) == 1 and \
            isinstance(target.slice[0].slice, cst.Index) and isinstance(target.slice[0].slice.value, cst.SimpleString):
        return target
    return None


def updated_display(small, bound):
    """Follow a statement filling a dict or list the factory built as a display and binds to one name alone (timm's
    selecsls.py: `cfg = {}`, `cfg["block"] = SelecSlsBlock`, `feature_info.extend([...])`): `NAME[key] = value` with
    a string key, `NAME.update(...)` with a dict display or keywords, `NAME.setdefault(key, value)`, `NAME.append(x)`,
    `NAME.extend(list or tuple display)`. The name is bound to the updated display (a key set again moves last: it
    wins over `**kwargs`, as it does in the source); True where followed. A display another name also holds (an
    alias) is not followed."""
    if isinstance(small, cst.Assign):
        target = string_key_target(small)
        if target is None:
            return False
        name, method = target.value.value, "__setitem__"
        arguments = [cst.Arg(target.slice[0].slice.value), cst.Arg(small.value)]
    elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and \
            isinstance(small.value.func, cst.Attribute) and isinstance(small.value.func.value, cst.Name):
        name, method, arguments = small.value.func.value.value, small.value.func.attr.value, small.value.args
    else:
        return False
    display = bound.get(name)
    if isinstance(display, cst.Call) and not held_elsewhere(display, bound, name):  # `model_kwargs = dict(...)`
        display = dict_display(display) or display
    if not isinstance(display, (cst.Dict, cst.List)) or held_elsewhere(display, bound, name):
        return False
    if any(argument.star and method != "update" for argument in arguments):
        return False
    if isinstance(display, cst.List) and method in ("append", "extend") and len(arguments) == 1:
        items = [cst.Element(arguments[0].value)] if method == "append" else \
            list(arguments[0].value.elements) if isinstance(arguments[0].value, (cst.List, cst.Tuple)) else None
        if items is None:
            return False
        bound[name] = display.with_changes(elements=[*display.elements, *substituted(cst.List(items), bound).elements])
        return True
    if not isinstance(display, cst.Dict):
        return False
    if method == "setdefault" and len(arguments) == 2 and isinstance(arguments[0].value, cst.SimpleString):
        key = arguments[0].value.evaluated_value
        if not any(isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) and
                   e.key.evaluated_value == key for e in display.elements):  # (else it changes nothing)
            default = substituted(arguments[1].value, bound)  # first: a `**kwargs` after it wins, as in the source
            bound[name] = display.with_changes(elements=[cst.DictElement(arguments[0].value, default),
                                                         *display.elements])
        return True
    if method == "__setitem__":
        added = [cst.DictElement(arguments[0].value, arguments[1].value)]
    elif method == "update" and all(a.keyword is not None for a in arguments):
        added = [cst.DictElement(cst.SimpleString(repr(a.keyword.value)), a.value) for a in arguments]
    elif method == "update" and len(arguments) == 1 and not arguments[0].star and \
            isinstance(arguments[0].value, cst.Dict) and \
            all(isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                for e in arguments[0].value.elements):
        added = list(arguments[0].value.elements)
    elif method == "update" and len(arguments) == 1 and not arguments[0].star and \
            isinstance(arguments[0].value, cst.Name) and _is_kwargs(bound.get(arguments[0].value.value)):
        # `model_kwargs.update(kwargs)` (timm's tiny_vit.py): the user's keyword arguments win over the display's
        bound[name] = display.with_changes(elements=[*display.elements, cst.StarredDictElement(cst.Name(KWARGS))])
        return True
    else:
        return False
    added = list(substituted(cst.Dict(added), bound).elements)
    keys = {element.key.evaluated_value for element in added}
    kept = [e for e in display.elements if not (isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                                                 and e.key.evaluated_value in keys)]
    if any(isinstance(e, cst.DictElement) and not isinstance(e.key, cst.SimpleString) for e in kept):
        return False  # (a key porter cannot compare)
    bound[name] = display.with_changes(elements=[*kept, *added])
    return True


def _is_kwargs(value):
    return isinstance(value, cst.Name) and value.value == KWARGS


def held_elsewhere(display, bound, name):
    """Whether another bound name holds the very display node bound to `name` (`other = cfg`, `[cfg]`)."""
    found = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, node):
            if node is display:
                found.append(node)
                return False
            return True

    for other, value in bound.items():
        if other != name and isinstance(value, cst.CSTNode):
            walk(value, Finder())
    return bool(found)


def popped_key(value, bound):
    """The key of `value` when it is `NAME.pop(key, ...)` of keyword arguments the user may give, else None."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "pop":
        return default_keyword_read(value, bound)
    return None


def hands_keywords(node, bound):
    """Whether `node` hands the generated factory's keyword arguments themselves (not a copy, as `**kwargs` is) to a
    call: `resolve_act_layer(kwargs, "relu")`, which may pop from them."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Arg(self, argument):
            value = bound.get(argument.value.value) if isinstance(argument.value, cst.Name) else None
            found.extend([argument] if not argument.star and isinstance(value, cst.Name) and value.value == KWARGS
                         else [])

    walk(node, Finder())
    return bool(found)


def default_keyword_read(call, bound):
    """The key of `call` when it is `NAME.pop(key[, default])` or `NAME.get(...)` of a string key from keyword
    arguments holding the generated factory's `**kwargs` (the name bound to them, or to a dict display of them and
    other keys) and not that key: what the user may give; None otherwise."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value in ("pop", "get") and
            isinstance(call.func.value, cst.Name) and 1 <= len(call.args) <= 2 and
            all(not arg.star and arg.keyword is None for arg in call.args) and
            isinstance(call.args[0].value, cst.SimpleString)):
        return None
    key = call.args[0].value.evaluated_value
    value = bound.get(call.func.value.value)
    if isinstance(value, cst.Name) and value.value == KWARGS:
        return key
    as_dict = dict_display(value) if isinstance(value, cst.CSTNode) else None
    if as_dict is None or not any(isinstance(e, cst.StarredDictElement) and isinstance(e.value, cst.Name) and
                                  e.value.value == KWARGS for e in as_dict.elements):
        return None
    literal_keys = [e.key for e in as_dict.elements if isinstance(e, cst.DictElement)]
    if not all(isinstance(k, cst.SimpleString) for k in literal_keys) or \
            key in {k.evaluated_value for k in literal_keys}:
        return None
    return key


def kwargs_names(bound):
    """Names bound to keyword arguments: the generated factory's, a dict display, or a value built from them
    (`options = dict(width=4, **kwargs)`): a statement changing one changes what is built."""
    return {name for name, value in bound.items()
            if isinstance(value, cst.Dict) or isinstance(value, cst.CSTNode) and KWARGS in free_names([value])}


def reads_unknown(expression, bound):
    return any(bound.get(name) is UNKNOWN for name in free_names([expression]))


class _Substitute(cst.CSTTransformer):
    def __init__(self, bound):
        self.bound = bound

    def leave_Name(self, original, updated):
        value = self.bound.get(original.value)
        if value is None:
            return updated
        if value is UNKNOWN:
            return cst.Name("__porter_unknown__")
        if not isinstance(value, _ATOMIC) and not value.lpar:
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return value

    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)


def substituted(node, bound):
    if inner_names(node) & set(bound):
        raise Unread  # `[f(i) for i in ...]` where the factory binds `i` too: not substituted blindly
    if reads_default_keywords(node, bound, ("get",)):  # `kwargs.get("in_chans", 3)` over `dict(model_args,
        return own_keywords(node, bound, ("get",))  # **kwargs)`: the user's (timm's vitamin.py)
    result = node.visit(_Substitute(bound))
    if "__porter_unknown__" in free_names([result]) or reads_a_bound_dict(result):
        raise Unread  # an unread value, or `kwargs.pop(...)` of keyword arguments a helper added to
    return result


class _DictRead(cst.CSTVisitor):
    def __init__(self):
        self.found = False

    def visit_Attribute(self, node):
        self.found = self.found or isinstance(node.value, cst.Dict)


def popped_from_displays(node, bound):
    """`node` with each `NAME.pop("key"[, default])` of a key that the dict display bound to NAME holds (keyword
    arguments a caller added: timm's `_gen_efficientnet(..., norm_layer=partial(GroupNormAct, group_size=8),
    **kwargs)`, then `kwargs.pop('norm_layer', None) or ...`) replaced by the key's value, and NAME bound to the
    display without it (`bound` updated: the `**kwargs` spread after the pop no longer holds the key); a display
    left holding the factory's keyword arguments alone is bound to them again (`kwargs`, as the source has them
    after the pop: a helper handed them pops from them). Where other keys remain, only a pop that is the statement's
    first mention of NAME."""
    mentions = [n for n in descendants(node) if isinstance(n, cst.Name) and n.value in bound]
    replaced = {}
    for call in descendants(node):
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and
                call.func.attr.value == "pop" and isinstance(call.func.value, cst.Name) and
                1 <= len(call.args) <= 2 and isinstance(call.args[0].value, cst.SimpleString) and
                all(not a.star and a.keyword is None for a in call.args)):
            continue
        name = call.func.value.value
        display = bound.get(name)
        if not isinstance(display, cst.Dict):
            continue
        key = call.args[0].value.evaluated_value
        held = [e for e in display.elements if isinstance(e, cst.DictElement) and
                isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == key]
        rest = [e for e in display.elements if not held or e is not held[0]]
        alone = len(rest) == 1 and isinstance(rest[0], cst.StarredDictElement) and \
            isinstance(rest[0].value, cst.Name) and rest[0].value.value == KWARGS
        first = next((n for n in mentions if n.value == name), None)
        if len(held) != 1 or not alone and first is not call.func.value:
            continue
        replaced[call] = held[0].value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        bound[name] = cst.Name(KWARGS) if alone else display.with_changes(elements=rest)
        mentions = [n for n in mentions if n is not call.func.value]
    return node.visit(_Replaced(replaced)) if replaced else node


class _Replaced(cst.CSTTransformer):
    def __init__(self, replaced):
        super().__init__()
        self.replaced = replaced

    def leave_Call(self, original, updated):
        return self.replaced.get(original, updated)


def reads_a_bound_dict(node):
    visitor = _DictRead()
    walk(node, visitor)
    return visitor.found


def dict_display(value):
    """`dict(block=Bottleneck, **kwargs)`, `dict(model_args, **kwargs)` or a dict display as a cst.Dict (keys that
    are strings, `**kwargs` of the generated factory), or None."""
    if isinstance(value, cst.Dict):
        return value
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict"):
        return None
    elements = []
    for argument in value.args:
        if argument.keyword is not None:
            elements.append(cst.DictElement(cst.SimpleString(repr(argument.keyword.value)), argument.value))
        elif argument.star == "**" and isinstance(argument.value, cst.Name) and argument.value.value == KWARGS:
            elements.append(cst.StarredDictElement(argument.value))
        else:
            inner = dict_display(argument.value)
            if inner is None:
                return None
            elements.extend(inner.elements)
    return cst.Dict(elements)


def unpacked(call, keep_merged=False):
    """The call with each `*(a, b)` argument (a bound `*args`) and `**{"k": v, **kwargs}` (a bound `**kwargs`, or
    `**dict(model_args, **kwargs)`) spread into its items. `keep_merged` (a construction): keyword arguments merged
    with the user's stay one dict display (`**{"layers": (3, 4), **kwargs}`: the user's win where they win in the
    source, where spread they would be given twice)."""
    arguments = []
    for argument in call.args:
        if argument.star == "**" and not isinstance(argument.value, cst.Name):
            as_dict = dict_display(argument.value)
            argument = argument.with_changes(value=as_dict) if as_dict is not None else argument
            if keep_merged and isinstance(argument.value, cst.Dict) and merges_keywords(argument.value):
                arguments.append(argument)
                continue
        if argument.star == "*" and isinstance(argument.value, cst.Tuple):
            arguments.extend(cst.Arg(element.value) for element in argument.value.elements)
        elif argument.star == "**" and isinstance(argument.value, cst.Dict):
            for element in argument.value.elements:
                if isinstance(element, cst.StarredDictElement):
                    arguments.append(cst.Arg(element.value, star="**"))
                elif isinstance(element.key, cst.SimpleString):
                    arguments.append(cst.Arg(element.value, keyword=cst.Name(element.key.evaluated_value)))
                else:
                    raise Unread
        else:
            arguments.append(argument)
    return call.with_changes(args=arguments)


def without_keywords(arguments, keys):
    """Call arguments without the keyword arguments `keys`, in the call or in a dict display it spreads."""
    kept = []
    for argument in arguments:
        if argument.keyword is not None and argument.keyword.value in keys:
            continue
        if argument.star == "**" and isinstance(argument.value, cst.Dict):
            argument = argument.with_changes(value=argument.value.with_changes(elements=[
                e for e in argument.value.elements if not (isinstance(e, cst.DictElement) and
                                                           isinstance(e.key, cst.SimpleString) and
                                                           e.key.evaluated_value in keys)]))
        kept.append(argument)
    return kept


def merges_keywords(display):
    """Whether a dict display holds the generated factory's `**kwargs` and keys of its own."""
    starred = [e for e in display.elements if isinstance(e, cst.StarredDictElement)]
    return len(starred) < len(display.elements) and any(
        isinstance(e.value, cst.Name) and e.value.value == KWARGS for e in starred)


def node_code(node):
    return cst.Module([]).code_for_node(node)


class _ReadNames(cst.CSTVisitor):
    def __init__(self):
        self.names, self.inner = set(), set()  # read; bound inside (comprehension targets, lambda parameters)

    def visit_Name(self, node):
        self.names.add(node.value)

    def visit_CompFor(self, node):
        self.inner.update(target_names(node.target))

    def visit_Param(self, node):
        self.inner.add(node.name.value)
        if node.default is not None:
            walk(node.default, self)
        return False

    def visit_Attribute(self, node):
        walk(node.value, self)
        return False

    def visit_Arg(self, node):
        walk(node.value, self)
        return False


def free_names(nodes):
    """Names an expression reads (attribute names, keywords and the names its comprehensions and lambdas bind
    aside)."""
    visitor = _ReadNames()
    for node in nodes:
        walk(node, visitor)
    return visitor.names - visitor.inner


def inner_names(node):
    visitor = _ReadNames()
    walk(node, visitor)
    return visitor.inner
