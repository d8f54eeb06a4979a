"""Rule: `torch._assert(condition, message)`, the TorchScript-friendly assert model code puts on sizes.

Layout "source": its arguments are Python values (sizes read off `x.shape`), which the runtime checks as torch does.
"""

from porter.rules.registry import function_rule

function_rule("torch._assert", runtime="torch_assert", signature="(condition, message)", layout="source")
