"""Rules: torch's lazy layers (LazyLinear, LazyConv1d/2d/3d, LazyBatchNorm1d/2d/3d): the input's channel count
comes at the first call (runtime/lazy.py)."""

from porter.rules.registry import module_rule

module_rule("torch.nn.LazyLinear", runtime="LazyLinear", layout="source")
module_rule("torch.nn.LazyConv1d", runtime="LazyConv1d", layout="channels_last", rank=3)
module_rule("torch.nn.LazyConv2d", runtime="LazyConv2d", layout="channels_last", rank=4)
module_rule("torch.nn.LazyConv3d", runtime="LazyConv3d", layout="channels_last", rank=5)
module_rule("torch.nn.LazyBatchNorm1d", runtime="LazyBatchNorm1d", layout="channels_last", training=True)
module_rule("torch.nn.LazyBatchNorm2d", runtime="LazyBatchNorm2d", layout="channels_last", training=True)
module_rule("torch.nn.LazyBatchNorm3d", runtime="LazyBatchNorm3d", layout="channels_last", training=True)
