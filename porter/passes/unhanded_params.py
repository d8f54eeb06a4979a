"""Constructor parameters that no construction of a class hands: they hold their default.

`self.norm = norm_layer(embed_dim) if norm_layer else nn.Identity()` (the PatchEmbed of PoolFormer, Swin, PVT and
timm) made the attribute unknown: `norm_layer` is a parameter, so the module it builds is one porter cannot see, and
a call of it (`call_module`) lost the image's rank (a later `x.mean([-2, -1])` then converted to torch's layout).
Where every construction of the class is a `PatchEmbed(...)` call porter reads and none hands `norm_layer`, the
parameter holds its default `None` in every instance: the test is decided (`norm_layer`, `not norm_layer`,
`norm_layer is None`, `norm_layer is not None`) and the attribute is the module the branch taken builds.

Only what the constructor scan reads is decided; the constructor's code keeps the test (the port builds what torch
builds). A class that could be built where porter cannot see (the main class, which the user builds; one the file
names other than by calling it: `embed_layer=PatchEmbed`, `partial(PatchEmbed, ...)`, a base class; one another
file of a package imports; one a construction hands `*args`/`**kwargs`) decides nothing.
"""

import libcst as cst

from porter.frontend.arguments import parameter_of

# param_hints key: class -> (the parameters some construction hands ("*": a splat), ids of the calls read)
HANDED = "#handed"
UNHANDED = "#unhanded"  # constructor-scan env key: the parameters known to hold their default None


def note_handed(param_hints, class_name, params, node):
    """Record which of `params` (the constructor's, `self` left out) the construction `node` hands."""
    handed = set()
    for position, arg in enumerate(node.args):
        name = "*" if arg.star else parameter_of(arg, position, params)
        if name is not None:
            handed.add(name)
    table = param_hints.setdefault(HANDED, {})
    before, calls = table.get(class_name, (frozenset(), frozenset()))
    table[class_name] = (before | handed, calls | {id(node)})


def unhanded_none_params(source, info, params, param_hints, main_class):
    """Names of `info`'s constructor parameters (`params`: libcst Params) that default to None and that no
    construction hands, where every construction is one porter reads (see the module docstring)."""
    handed, calls = param_hints.get(HANDED, {}).get(info.name, (None, None))
    if handed is None or "*" in handed or info.name == main_class or info.name in source.exported or \
            info.name in source.names_not_called or \
            not {id(call) for call in source.calls_named(info.name)} <= calls:
        return frozenset()  # (a construction the constructor scans never read: in a forward, a reset method)
    return frozenset(p.name.value for p in params if isinstance(p.default, cst.Name) and p.default.value == "None"
                     and p.name.value not in handed)


def decided_test(test, env, present=frozenset()):
    """True/False for a test on a parameter known to hold None (`norm_layer`, `not norm_layer`, `norm_layer is
    None`, `norm_layer is not None`), or one of `present`, known to hold a module (a helper's parameter its call
    handed `act=nn.ReLU`); None when the test is not one of those."""
    unhanded = env.get(UNHANDED) if isinstance(env, dict) else None
    if not unhanded and not present:
        return None
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = decided_test(test.expression, env, present)
        return None if inner is None else not inner
    if isinstance(test, cst.Name):
        name, when_none = test.value, False  # (the test's truth where the name holds None)
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name) and \
            isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None" \
            and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot)):
        name, when_none = test.left.value, isinstance(test.comparisons[0].operator, cst.Is)
    else:
        return None
    if name in (unhanded or ()):
        return when_none
    return not when_none if name in present else None
