"""Rules: `torch.finfo(dtype)` / `torch.iinfo(dtype)` (`-torch.finfo(dots.dtype).max` as an attention mask value)
-> porter/runtime/dtype_info.py: the same limits for the TensorFlow dtype (plain Python values, no tensor)."""

from porter.rules.registry import function_rule

function_rule("torch.finfo", runtime="finfo", signature="(type=None)", layout="source", outputs="python")
function_rule("torch.iinfo", runtime="iinfo", signature="(type)", layout="source", outputs="python")
