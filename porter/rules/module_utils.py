"""Rules: torch.nn.modules.utils' tuple helpers (`_single`, `_pair`, `_triple`, `_quadruple`, `_ntuple(n)`), which
layer code written outside torch imports to normalise sizes (CondConv's `self.kernel_size = _pair(kernel_size)`):
Python values, computed as timm's to_ntuple computes them (an iterable kept as a tuple, a scalar repeated)."""

from porter.rules.registry import function_rule

# (the import resolver reads `torch.nn.modules.utils` as torch.nn's own module path: `torch.nn._pair`)
UTILS = ("torch.nn.modules.utils.", "torch.nn.")
for _n, _name in ((1, "_single"), (2, "_pair"), (3, "_triple"), (4, "_quadruple")):
    function_rule(*(path + _name for path in UTILS), runtime=f"to_{_n}tuple", layout="any", signature="(x)",
                  outputs="python")
function_rule(*(path + "_ntuple" for path in UTILS), runtime="to_ntuple", layout="any", signature="(n, name='parse')",
              outputs="python")
