"""Rules: the methods of mxnet's np.ndarray (NumPy semantics, in code under `npx.set_np()`), canonical
`mxnet.np.ndarray.<method>`: `x.reshape(-1, 1)` (NumPy's shape: no special codes), `x.sum(axis=1)` (a full
reduction is rank 0), `x.argmax(axis=1)` (int64), `x.astype(dtype)`, `x.flatten()` (1-D), `x.repeat(n, axis=0)`,
`x.swapaxes(0, 1)`, `x.as_in_ctx(ctx)` ... The translator looks here first for a file that imports mxnet's NumPy
interface (porter/frontend/gluon_numpy.py), then at the legacy NDArray methods and torch's."""

from porter.rules.gluon_numpy import LEGACY, NUMPY_METHODS
from porter.rules.gluon_routing import via_rule
from porter.rules.registry import function_rule

_KEYS = {"axis": "dim", "keepdims": "keepdim"}


def _method(name, **kwargs):
    return function_rule(NUMPY_METHODS + name, **kwargs)


def translate_same(ctx, call):
    """`x.as_in_ctx(ctx)`, `x.copyto(ctx)`, `x.detach()`: the value itself (devices are the strategy's job)."""
    return call.receiver


_method("reshape", translate=via_rule("Tensor.reshape", "(a, *shape, order='C')", refused={"order": "'C'"}),
        layout="source")
_method("flatten", translate=via_rule("torch.flatten", "(a, order='C')", refused={"order": "'C'"}), layout="any")
for _name, _torch in (("sum", "sum"), ("mean", "mean"), ("prod", "prod"), ("max", "amax"), ("min", "amin"),
                      ("all", "all"), ("any", "any")):
    _method(_name, translate=via_rule(f"torch.{_torch}", "(a, axis=None, dtype=None, out=None, keepdims=False)",
                                      _KEYS), layout="any")
for _name in ("argmax", "argmin"):
    _method(_name, translate=via_rule(f"torch.{_name}", "(a, axis=None, out=None, keepdims=False)", _KEYS),
            layout="any")
_method("astype", runtime="np_astype", signature="(x, dtype, copy=True)", layout="any")
_method("transpose", translate=via_rule(LEGACY + "transpose", "(a, *axes)", positional=1), layout="source")
_method("swapaxes", translate=via_rule("torch.swapaxes", "(a, axis1, axis2)", positional=3), layout="source")
_method("repeat", translate=via_rule(LEGACY + "repeat", "(a, repeats, axis=None)", {"axis": "axis"}, positional=2),
        layout="source")
_method("squeeze", translate=via_rule(LEGACY + "squeeze", "(a, axis=None)", {"axis": "axis"}), layout="source")
_method("expand_dims", translate=via_rule("torch.unsqueeze", "(a, axis)", {"axis": "dim"}), layout="source",
        rank_delta=1)
_method("clip", translate=via_rule("torch.clamp", "(a, min=None, max=None, out=None)", positional=3), layout="any")
_method("dot", translate=via_rule("mxnet.np.dot", "(a, b, out=None)", positional=2), layout="source")
for _name in ("as_in_ctx", "as_in_context", "copyto", "detach", "as_np_ndarray", "as_nd_ndarray"):
    _method(_name, translate=translate_same, layout="any")
for _name in ("cumsum", "take", "argsort", "broadcast_to", "std", "var"):  # (mxnet's ndarray has no tile, flip)
    _method(_name, translate=via_rule(f"mxnet.np.{_name}", "(a, *args, **kwargs)", keywords=True),
            layout="source")
