"""Rules: MXNet operators sequence models call through `F` (GluonNLP's BERT and Transformer) ->
porter/runtime/gluon_sequence_ops.py: contrib.arange_like, broadcast_like / broadcast_axis, the broadcast
comparisons, cast / astype, the Embedding operator (`F.Embedding(ids, weight, input_dim, output_dim)`, a weight the
block holds), gather_nd, reshape_like, shape_array and stack. All run in Gluon's own axis order (sequences are
never laid out channels-last); the NDArray methods (`x.astype('int32')`, `x.reshape_like(y, ...)`) are the same
rules, and those no Python value has are read as tensor methods on arguments of unknown kind (an optional input)."""

from porter.ir.values import python
from porter.rules.registry import Signature, function_rule

OPS = "mxnet.ndarray."
SOURCE = "source"
_ARANGE_LIKE = Signature.parse("(data, start=0.0, step=1.0, repeat=1, ctx=None, axis=None, name=None)")


def translate_arange_like(ctx, call):
    """F.contrib.arange_like: data's shape, or one axis (rank 1) when `axis` is given."""
    result = ctx.apply_declarative(ARANGE_LIKE, call)
    axis = call.bind(_ARANGE_LIKE).get("axis")
    return result.but(rank=1) if axis is not None and axis.code != "None" else result


ARANGE_LIKE = function_rule(OPS + "contrib.arange_like", runtime="gluon_arange_like", layout=SOURCE,
                            signature="(data, start=0.0, step=1.0, repeat=1, ctx=None, axis=None, name=None)",
                            translate=translate_arange_like, same_rank=True)
function_rule(OPS + "broadcast_like", runtime="gluon_broadcast_like", layout=SOURCE, same_rank=True,
              signature="(lhs, rhs, lhs_axes=None, rhs_axes=None, name=None)")
function_rule(OPS + "broadcast_axis", OPS + "broadcast_axes", runtime="gluon_broadcast_axis", layout=SOURCE,
              same_rank=True, signature="(data, axis=(), size=(), name=None)")
# F.broadcast_<comparison> -> the tf.math comparison gluon_broadcast_compare applies (a comparison is one entry)
COMPARISONS = {"equal": "equal", "not_equal": "not_equal", "greater": "greater", "greater_equal": "greater_equal",
               "lesser": "less", "lesser_equal": "less_equal"}
_COMPARISON = Signature.parse("(lhs, rhs, name=None)")
_COMPARE = function_rule(runtime="gluon_broadcast_compare", layout=SOURCE, same_rank=True,
                         signature="(lhs, rhs, compare, name=None)")  # no name of its own: the comparisons' runtime


def _comparison(compare):
    def translate(ctx, call):
        """F.broadcast_<comparison>(lhs, rhs): gluon_broadcast_compare(lhs, rhs, compare=<the tf.math name>)."""
        bound = call.bind(_COMPARISON)
        named = {"compare": python(repr(compare), static=compare)}
        return ctx.apply_declarative(_COMPARE, type(call)(call.canonical, [bound["lhs"], bound["rhs"]], named,
                                                          call.line))

    return translate


for _name, _compare in COMPARISONS.items():
    function_rule(OPS + f"broadcast_{_name}", translate=_comparison(_compare), layout=SOURCE, same_rank=True,
                  signature="(lhs, rhs, name=None)")
function_rule(OPS + "cast", OPS + "Cast", runtime="gluon_cast", layout=SOURCE, same_rank=True,
              signature="(data, dtype, name=None)")
function_rule(OPS + "astype", runtime="gluon_cast", layout=SOURCE, same_rank=True, tensor_only=True,
              signature="(data, dtype, copy=True)")
# the ids gain a last axis (the embedding's width)
function_rule(OPS + "Embedding", runtime="gluon_embedding_lookup", layout=SOURCE, rank_delta=1,
              signature="(data, weight, input_dim=None, output_dim=None, dtype='float32', sparse_grad=False, "
                        "name=None)")
function_rule(OPS + "gather_nd", runtime="gluon_gather_nd", layout=SOURCE, signature="(data, indices, name=None)")
function_rule(OPS + "reshape_like", runtime="gluon_reshape_like", layout=SOURCE, tensor_only=True,
              signature="(lhs, rhs, lhs_begin=None, lhs_end=None, rhs_begin=None, rhs_end=None, name=None)")
function_rule(OPS + "shape_array", runtime="gluon_shape_array", layout=SOURCE, rank=1, tensor_only=True,
              signature="(data, name=None)")
function_rule(OPS + "stack", runtime="gluon_stack", layout=SOURCE, rank_delta=1,
              signature="(*data, axis=0, num_args=None, name=None)")
