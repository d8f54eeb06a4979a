"""Attributes a constructor binds to one of the class's own methods (`self._combine_func = self._add` in one branch,
`= self._concat` in the other, ShuffleNet v1's unit), so that `self._combine_func(x, out)` in `forward` is translated
as a call of those methods rather than of a callable porter cannot see."""

import libcst as cst

from porter.frontend.imports import dotted_name
from porter.frontend.walk import descendants


def aliased_methods(info, attribute):
    """The methods of `info` that its `__init__` binds `self.<attribute>` to (in order, without repeats), or None when
    the constructor binds it to anything else too (or never)."""
    cache = info.__dict__.setdefault("_aliased_methods", {})
    if attribute not in cache:
        cache[attribute] = _aliased_methods(info, attribute)
    return cache[attribute]


def _aliased_methods(info, attribute):
    init = info.find_method("__init__")
    if init is None:
        return None
    methods = []
    for node in descendants(init):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else \
            [node.target] if isinstance(node, (cst.AugAssign, cst.AnnAssign)) else []
        names = [dotted_name(e.value) for t in targets if isinstance(t, (cst.Tuple, cst.List)) for e in t.elements]
        if f"self.{attribute}" in names:
            return None  # (`self.f, self.g = ...`: bound to what porter does not follow)
        if not any(dotted_name(t) == f"self.{attribute}" for t in targets):
            continue
        values = _choices(node.value) if isinstance(node, cst.Assign) else [None]
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
