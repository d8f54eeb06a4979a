"""Rules: MXNet's batch_dot/dot, broadcast_* arithmetic, expand_dims, split, repeat, SequenceMask, one_hot and where
(as `F.*` and `mx.nd.*` call them) -> porter/runtime/gluon_math_ops.py. Ops that read axes run in Gluon's own order;
the broadcast arithmetic runs on whatever layout its operands arrive in (an SE block's channel weights, (N, C, 1, 1),
scale a channels-last image as it lies: `unify` moves both to one layout, a lower-rank operand broadcast first)."""

from porter.rules.gluon_routing import via_rule
from porter.rules.registry import function_rule

OPS = "mxnet.ndarray."
_PRODUCT = "(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None, name=None)"

function_rule(OPS + "batch_dot", runtime="gluon_batch_dot", signature=_PRODUCT, layout="source")
function_rule(OPS + "dot", runtime="gluon_dot", signature=_PRODUCT, layout="source")
for _name, _aliases in (("add", ("broadcast_plus",)), ("sub", ("broadcast_minus",)), ("mul", ()), ("div", ()),
                        ("maximum", ()), ("minimum", ())):
    function_rule(OPS + f"broadcast_{_name}", *(OPS + alias for alias in _aliases), runtime=f"gluon_broadcast_{_name}",
                  signature="(lhs, rhs, name=None)", layout="any")
for _name in ("add", "sub", "mul", "div"):  # same-shape operands: whatever layout both arrive in (a residual add)
    function_rule(OPS + f"elemwise_{_name}", runtime=f"gluon_broadcast_{_name}", signature="(lhs, rhs, name=None)",
                  layout="any")
# torch's unsqueeze under another parameter name: a channels-last image keeps its layout (the new axis is stored
# where the data lies)
function_rule(OPS + "expand_dims", layout="source", rank_delta=1, translate=via_rule(
    "torch.unsqueeze", "(data, axis, name=None)", {"axis": "dim"}))
function_rule(OPS + "split", OPS + "SliceChannel", runtime="gluon_split",
              signature="(data, num_outputs, axis=1, squeeze_axis=False, name=None)", layout="source", outputs="tuple")
function_rule(OPS + "repeat", runtime="gluon_repeat", signature="(data, repeats, axis=None, name=None)",
              layout="source", keeps_dtype=True)
function_rule(OPS + "SequenceMask", runtime="gluon_sequence_mask", layout="source",
              signature="(data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0, name=None)")
function_rule(OPS + "FullyConnected", runtime="gluon_fully_connected", layout="source",
              signature="(data, weight, bias=None, num_hidden=None, no_bias=False, flatten=True, name=None)")
# the index tensor gains a last axis (in Gluon's order: token ids are not images)
function_rule(OPS + "one_hot", runtime="gluon_one_hot", layout="source", rank_delta=1,
              signature="(indices, depth, on_value=1.0, off_value=0.0, dtype='float32', name=None)")
# elementwise like the broadcast arithmetic: the operands in whatever layout they arrive in
function_rule(OPS + "where", runtime="gluon_where", signature="(condition, x, y, name=None)", layout="any",
              keeps_dtype=True)
