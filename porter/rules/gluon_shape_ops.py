"""Rules: MXNet's reshape and transpose (`F.reshape`, `F.transpose`, and the NDArray methods `x.reshape(...)`,
`x.transpose(...)` on Gluon values) -> porter/runtime/gluon_shape_ops.py, in Gluon's own axis order (a
channels-last tensor is converted back first; rank-3 sequences are never transposed for it)."""

from porter.rules.registry import function_rule

OPS = "mxnet.ndarray."

function_rule(OPS + "reshape", OPS + "Reshape", runtime="gluon_reshape",
              signature="(data, *dims, shape=None, reverse=False, name=None)", layout="source")
function_rule(OPS + "transpose", runtime="gluon_transpose", signature="(data, *given, axes=None, name=None)",
              layout="source", rank_delta=0)
