"""Rules: the `mxnet.npx` operators (also `mxnet.numpy_extension`, or `F.npx` in hybrid_forward) of Gluon code in
NumPy mode: the legacy operators under their NumPy-mode names (relu, sigmoid, activation, softmax, batch_dot,
one_hot, sequence_mask, batch_flatten, dropout), and porter/runtime/gluon_numpy_extension.py for those of a meaning
of their own (reshape's shape codes, pick, topk, layer_norm)."""

from porter.rules.gluon_numpy import LEGACY, NPX, np_names
from porter.rules.gluon_routing import via_rule
from porter.rules.registry import function_rule


def _register(name, **kwargs):
    return function_rule(*np_names(name, NPX), **kwargs)


for _name, _legacy in (("relu", "gluon_relu"), ("sigmoid", "gluon_sigmoid")):
    _register(_name, runtime=_legacy, signature="(data)", layout="any")
_register("activation", runtime="gluon_activation", signature="(data, act_type='relu')", layout="any")
_register("leaky_relu", runtime="gluon_leaky_relu", signature="(data, act_type='leaky', slope=0.25)", layout="any")
for _name in ("softmax", "log_softmax"):
    _register(_name, translate=via_rule(
        f"torch.nn.functional.{_name}", "(data, length=None, axis=-1, temperature=None, use_length=False, "
                                        "dtype=None)", {"axis": "dim"}, defaults={"dim": "-1"},
        refused={"temperature": "None", "use_length": "False", "length": "None"}), layout="any")
_register("erf", translate=via_rule("torch.erf", "(data)"), layout="any")
_register("cast", runtime="np_astype", signature="(x, dtype)", layout="any")
_register("batch_dot", runtime="gluon_batch_dot", layout="source",
          signature="(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None)")
_register("one_hot", runtime="gluon_one_hot", layout="source", rank_delta=1,
          signature="(indices, depth, on_value=1.0, off_value=0.0, dtype='float32')")
_register("sequence_mask", runtime="gluon_sequence_mask", layout="source",
          signature="(data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0)")
_register("batch_flatten", runtime="gluon_flatten", signature="(data)", layout="source", rank=2)
_register("reshape", runtime="npx_reshape", signature="(a, newshape, reverse=False, order='C')", layout="source",
          keeps_dtype=True)
_register("pick", runtime="npx_pick", signature="(data, index, axis=-1, mode='clip', keepdims=False)",
          layout="source")
_register("topk", runtime="npx_topk", layout="source",
          signature="(data, axis=-1, k=1, ret_typ='indices', is_ascend=False, dtype='float32')")
_register("layer_norm", runtime="npx_layer_norm", layout="source",
          signature="(data, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False)")
_register("dropout", layout="any", translate=via_rule(
    LEGACY + "Dropout", "(data, p=0.5, mode='training', axes=None, cudnn_off=True)", keywords=True))
