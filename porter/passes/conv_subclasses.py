"""The spatial rank of a class deriving from a torch convolution, read from the source.

A class deriving from `nn.Conv2d` has its base's rank. One deriving from torch's own base, `_ConvNd` (CondConv and
other dynamic convolutions), hands torch's constructor a kernel size whose length is the rank: the source says it by
the functional convolution its methods call (`F.conv2d(x, self.weight, ...)`), else by the size helper its
constructor uses (`_pair(kernel_size)`). The forward's reads of `self.weight` (a channels-last kernel in the port)
and the layout passes need it.
"""

import libcst as cst

from porter.frontend.walk import descendants

CONV_LAYER_RANKS = {"torch.nn.Conv1d": 1, "torch.nn.Conv2d": 2, "torch.nn.Conv3d": 3}
_FUNCTIONAL_RANKS = {f"{prefix}conv{rank}d": rank for prefix in ("torch.nn.functional.", "torch.") for rank in (1, 2, 3)}
_SIZE_HELPER_RANKS = {"torch.nn._single": 1, "torch.nn._pair": 2, "torch.nn._triple": 3}


def conv_subclass_rank(source, info):
    """The spatial rank (1, 2 or 3) of the convolution class `info` derives from, or None (not one, or unsaid)."""
    if info is None or info.layer_base is None:
        return None
    if info.layer_base in CONV_LAYER_RANKS:
        return CONV_LAYER_RANKS[info.layer_base]
    if info.layer_base != "torch.nn._ConvNd":
        return None
    cache = source.__dict__.setdefault("_conv_subclass_ranks", {})
    if info.name not in cache:
        cache[info.name] = _said_rank(source, info)
    return cache[info.name]


def _said_rank(source, info):
    calls = [node for method in info.methods.values() for node in descendants(method) if isinstance(node, cst.Call)]
    for table in (_FUNCTIONAL_RANKS, _SIZE_HELPER_RANKS):
        ranks = {table[name] for name in (source.imports.resolve(call.func) for call in calls) if name in table}
        if len(ranks) == 1:
            return ranks.pop()
    return None
