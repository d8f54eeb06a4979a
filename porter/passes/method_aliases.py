"""Attributes a constructor binds to one of the class's own methods (`self._combine_func = self._add` in one branch,
`= self._concat` in the other, ShuffleNet v1's unit), so that `self._combine_func(x, out)` in `forward` is translated
as a call of those methods rather than of a callable porter cannot see."""

import libcst as cst

from porter.frontend.imports import dotted_name

ASSIGNMENTS = (cst.Assign, cst.AugAssign, cst.AnnAssign)


def aliased_methods(source, info, attribute):
    """The methods of `info` that its `__init__` binds `self.<attribute>` to (in order, without repeats), or None when
    the constructor binds it to anything else too (or never)."""
    cache = info.__dict__.get("_aliased_methods")
    if cache is None:  # every attribute from one look at the constructor's assignments (asked once per self call)
        cache = info.__dict__["_aliased_methods"] = _aliased_methods(source, info)
    return cache.get(attribute)


def _aliased_methods(source, info):
    """{attribute: its methods or None} for every `self.<attribute>` the constructor of `info` assigns."""
    init = info.find_method("__init__")
    if init is None:
        return {}
    bindings = {}  # attribute -> [method names, None for anything else]
    for node in source.nodes_in(init, *ASSIGNMENTS):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            if isinstance(target, (cst.Tuple, cst.List)):  # (`self.f, self.g = ...`: bound to what porter does
                # not follow)
                for element in target.elements:
                    _bind(bindings, dotted_name(element.value), [None])
        values = _choices(node.value) if isinstance(node, cst.Assign) else [None]
        for name in dict.fromkeys(dotted_name(t) for t in targets):
            _bind(bindings, name, values)
    return {attribute: _methods(info, values) for attribute, values in bindings.items()}


def _bind(bindings, name, values):
    if name is not None and name.startswith("self.") and name.count(".") == 1:
        bindings.setdefault(name[5:], []).extend(values)


def _methods(info, values):
    methods = []
    for value in values:
        if value is None or not value.startswith("self.") or info.find_method(value[5:]) is None:
            return None
        methods.append(value[5:])
    return tuple(dict.fromkeys(methods)) or None


def _choices(node):
    """The dotted names an expression may evaluate to (`self._add if add else self._concat`: both); None stands for
    anything else."""
    if isinstance(node, cst.IfExp):
        return _choices(node.body) + _choices(node.orelse)
    return [dotted_name(node)]
