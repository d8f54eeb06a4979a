"""Where a forward stops holding its parameter: the parameter's name rebound to a reduction of it that drops dims,
or to the parameter with a dim added.

timm's SelectiveKernelAttn takes its paths stacked, (B, paths, C, H, W), and writes `x = x.sum(1).mean((2, 3),
keepdim=True)` before its first Conv2d: the conv convolves what the reduction made, a tensor of another rank, so
it says nothing of the layout the parameter should come in (taken for a channels-last image, the parameter's
`x.shape[1]` read the image's width). `rank_changing_rebinds(body, aliases)` gives the calls that start such a
rebinding; the layout preference of the parameter stops at them.
"""

import libcst as cst

from porter.frontend.walk import walk

REDUCTIONS = frozenset({"sum", "mean", "amax", "amin", "max", "min", "prod", "std", "var", "norm", "logsumexp",
                        "argmax", "argmin", "all", "any", "median", "nansum", "nanmean", "count_nonzero"})
DROPS_DIMS = frozenset({"squeeze", "select", "unbind"})
# (`x = x.unsqueeze(1)` of a (B, T) waveform before a Conv1d, wav2vec2's feature extractor: the conv takes what the
# unsqueeze made, of another rank than the parameter)
ADDS_DIMS = frozenset({"unsqueeze"})


def rank_changing_rebinds(body, aliases):
    """ids of the Call nodes `alias.reduction(...)` (a reduction without `keepdim=True`, a squeeze, ...) inside the
    value of an assignment that rebinds one of `aliases` (`x = x.sum(1).mean(...)`)."""
    found = set()

    class Visitor(cst.CSTVisitor):
        def visit_Assign(self, node):
            if any(isinstance(t.target, cst.Name) and t.target.value in aliases for t in node.targets):
                found.update(id(call) for call in _calls(node.value) if _drops_dims_of(call, aliases))

    walk(body, Visitor())
    return found


def _calls(node):
    calls = []

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, call):
            calls.append(call)

    walk(node, Visitor())
    return calls


def _drops_dims_of(call, aliases):
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in aliases):
        return False
    method = func.attr.value
    if method in DROPS_DIMS or method in ADDS_DIMS:
        return True
    if method not in REDUCTIONS:
        return False
    keepdim = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "keepdim"), None)
    return not (isinstance(keepdim, cst.Name) and keepdim.value == "True")
