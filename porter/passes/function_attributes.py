"""Functions a class's constructions hand it and it keeps on `self`: resnext_features' `LambdaMap(lambda x: x, ...)`,
`LambdaReduce(lambda x, y: x + y)`, stored as `self.lambda_func = fn` and applied in `forward`
(`self.lambda_func(...)`, `map(self.lambda_func, ...)`, `functools.reduce(self.lambda_func, ...)`).

Which function an instance holds is decided per construction, so the class's `call` reads what every construction of
the file hands it: when each is a lambda whose body computes the same code whether its tensors are held channels-last
or in torch's order (`x`, `x + y`: layout-free), the port calls the instance's own function on the tensors as they are
stored and its result keeps their layout. Otherwise (`lambda x: x.view(x.size(0), -1)` among them, or a function
porter cannot see) the function is read at each call (HandedLambdas): where every lambda, translated for the values
that call hands it, is the code it is written as (`lambda module, x1, x2: (module(x1), x2)` on a child that takes x1
as it is held), the instance's own function runs on them as they are held; else it gets torch's layout, as any plain
callable does.
"""

from dataclasses import dataclass

import libcst as cst

from porter.frontend.arguments import parameter_of
from porter.frontend.walk import descendants


@dataclass(frozen=True)
class LayoutFreeFunction:
    """The static of a `self` attribute holding, in every construction, one of `lambdas` (layout-free)."""

    lambdas: tuple


@dataclass(frozen=True)
class HandedLambdas:
    """The static of a `self` attribute holding, in every construction, one of `lambdas` (the same number of
    parameters each) that are not layout-free on their own: each call decides what they compute (calls.py)."""

    lambdas: tuple


def constructed_lambdas(source, info, stored):
    """{attribute: (lambda, ...)} for the attributes `stored` ({constructor parameter: attribute}) that every
    construction of `info` in the file (a call of the class by name) fills with a lambda, handed or left to the
    parameter's default (pytorchcv's `DualPathSequential(dual_path_scheme=(lambda module, x1, x2: module(x1, x2)))`);
    attributes some construction fills otherwise are left out."""
    cache = source.__dict__.setdefault("_constructed_lambdas", {})
    if info.name in cache:
        return cache[info.name]
    init = info.find_method("__init__")
    found = {}
    if init is not None and stored:
        names = [p.name.value for p in init.params.params][1:]
        defaults = {p.name.value: p.default for p in (*init.params.params, *init.params.kwonly_params)}
        sites = _calls_by_name(source).get(info.name, ())
        for param, attr in stored.items():
            lambdas = []
            for call in sites:
                handed = _argument(call, names, param)
                if handed is None and not any(arg.star for arg in call.args):
                    handed = defaults.get(param)  # (left to the default)
                if not isinstance(handed, cst.Lambda):
                    lambdas = []
                    break
                lambdas.append(handed)
            if lambdas:
                found[attr] = tuple(dict.fromkeys(lambdas))  # (the default once, however many take it)
    cache[info.name] = found
    return found


def _calls_by_name(source):
    """{name: [call, ...]} for the calls of a plain name in `source`'s module (a class's constructions), in file
    order; one walk of the file, kept on `source` for every class asked about."""
    table = source.__dict__.get("_calls_by_name")
    if table is None:
        table = source.__dict__["_calls_by_name"] = {}
        for node in descendants(source.module):
            if type(node) is cst.Call and type(node.func) is cst.Name:
                table.setdefault(node.func.value, []).append(node)
    return table


def _argument(call, names, param):
    """The expression `call` hands for constructor parameter `param` (None if not given or behind a star)."""
    for position, arg in enumerate(call.args):
        if arg.star:
            return None
        if parameter_of(arg, position, names) == param:
            return arg.value
    return None


def same_arity(lambdas):
    """The number of plain positional parameters every lambda takes (None when they differ or take others)."""
    counts = set()
    for function in lambdas:
        params = function.params
        if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.kwonly_params or \
                params.posonly_params or params.star_kwarg is not None or \
                any(p.default is not None for p in params.params):
            return None
        counts.add(len(params.params))
    return counts.pop() if len(counts) == 1 else None
