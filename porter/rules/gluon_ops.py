"""Rules: MXNet operators as Gluon code calls them through `F` in `hybrid_forward` (or `mx.nd.*`), canonical
`mxnet.ndarray.<op>`: activations, clip, flatten, concat and the mean/sum/max/min reductions (softmax and
log_softmax: rules/gluon_attention_ops.py).

Ops that are torch's under other parameter names (`axis` for `dim`, `keepdims` for `keepdim`) are translated by
the torch rule, so their layout handling (axis remapping on channels-last tensors) is the same.
"""

from porter.ir.lists import images_with_starred
from porter.ir.values import Value, python, tensor
from porter.rules.gluon_routing import via_rule
from porter.rules.registry import Signature, function_rule
from porter.rules.tensor_ops import translate_cat

OPS = "mxnet.ndarray."

function_rule(OPS + "Activation", runtime="gluon_activation", signature="(data, act_type, name=None)")
function_rule(OPS + "LeakyReLU", runtime="gluon_leaky_relu", signature="(data, act_type='leaky', slope=0.25, "
                                                                       "name=None)")
function_rule(OPS + "relu", runtime="gluon_relu", signature="(data, name=None)")
function_rule(OPS + "sigmoid", runtime="gluon_sigmoid", signature="(data, name=None)")
function_rule(OPS + "tanh", runtime="gluon_tanh", signature="(data, name=None)")
function_rule(OPS + "softsign", runtime="gluon_softsign", signature="(data, name=None)")
function_rule(OPS + "clip", runtime="gluon_clip", signature="(data, a_min, a_max, name=None)", keeps_dtype=True)
function_rule(OPS + "flatten", OPS + "Flatten", runtime="gluon_flatten", signature="(data, name=None)",
              layout="source", rank=2, keeps_dtype=True)


def translate_concat(ctx, call):
    """F.concat(*data, dim=1): torch's cat of the same tensors along `dim` (channels-last inputs stay so)."""
    items = tuple(call.args)
    code = f"[{', '.join(v.code for v in items)}]"
    held = images_with_starred(items)  # `F.concat(*x, dim=1)` of channels-last images: along their channel axis
    listed = Value(code, "tuple", items=None, static=("each", held)) if held is not None else \
        Value(code, "tuple", items=tuple(ctx.plain(v) if v.kind == "starred" else v for v in items))
    dim = call.kwargs.get("dim", python("1", static=1))
    return translate_cat(ctx, type(call)(call.canonical, [listed], {"dim": dim}, call.line))


function_rule(OPS + "concat", OPS + "Concat", translate=translate_concat, layout="any", starred_images=True)


_REDUCTION = "(data, axis=None, keepdims=False, exclude=False, name=None)"


def as_gluon_reduction(torch_name):
    """F.sum/mean/max/min: torch's reduction, except that reducing every axis (no `axis`, keepdims False) gives
    mxnet's shape (1,), not a scalar (mxnet 1.x NDArrays have no rank 0)."""
    signature = Signature.parse(_REDUCTION)
    translate = via_rule(torch_name, _REDUCTION, {"axis": "dim", "keepdims": "keepdim"},
                            refused={"exclude": "False"})

    def reduce(ctx, call):
        result = translate(ctx, call)
        bound = call.bind(signature)
        axis, keepdims = bound.get("axis"), bound.get("keepdims")
        if (axis is None or axis.code == "None") and (keepdims is None or keepdims.code == "False"):
            return tensor(f"{ctx.runtime('gluon_full_reduction')}({result.code})", 1)
        return result

    return reduce


for _name, _torch in (("mean", "torch.mean"), ("sum", "torch.sum"), ("max", "torch.amax"), ("min", "torch.amin")):
    function_rule(OPS + _name, layout="any", translate=as_gluon_reduction(_torch))
function_rule("mxnet.init.Constant", "mxnet.initializer.Constant", runtime="GluonConstant", signature="(value)")
for _name, _runtime, _signature in (
        ("Xavier", "GluonXavier", "(rnd_type='uniform', factor_type='avg', magnitude=3)"),
        ("Normal", "GluonNormal", "(sigma=0.01)"),
        ("Uniform", "GluonUniform", "(scale=0.07)"),
        ("Zero", "GluonZero", "()"),
        ("One", "GluonOne", "()")):
    function_rule(f"mxnet.init.{_name}", f"mxnet.initializer.{_name}", runtime=_runtime, signature=_signature)

_PARAMETER = Signature.parse("(name, grad_req='write', shape=None, dtype='float32', lr_mult=1.0, wd_mult=1.0, "
                             "init=None, allow_deferred_init=False, differentiable=True, stype='default', "
                             "grad_stype='default')")
_CONSTANT = Signature.parse("(name, value)")


def translate_parameter(ctx, call):
    """A Block's own parameter (`self.params.get(name, shape=, init=)`, `gluon.Parameter(...)`): a variable of
    that shape made by `init` (mxnet's default Uniform(0.07) without one), saved under the attribute's name;
    `grad_req='null'` makes it non-trainable. A shape with 0 (sized on the first call) is refused at run time."""
    bound = call.bind(_PARAMETER)
    shape = bound.get("shape")
    if shape is None:
        raise ValueError("a Gluon parameter without a shape")
    value = f"{ctx.runtime('gluon_parameter_value')}({shape.code}"
    for key in ("init", "dtype"):
        if key in bound:
            value += f", {key}={bound[key].code}"
    extra = ""
    if "grad_req" in bound:
        grad_req = bound["grad_req"]
        extra = f", requires_grad={grad_req.static != 'null'}" if isinstance(grad_req.static, str) else \
            f", requires_grad={grad_req.code} != 'null'"
    rank = len(shape.static) if isinstance(shape.static, (tuple, list)) else None
    return tensor(f"self.parameter({value}){extra}, name={bound['name'].code})", rank)


def translate_constant(ctx, call):
    """`self.params.get_constant(name, value)` / `gluon.Constant(name, value)`: a non-trainable variable holding
    `value`, saved under the attribute's name."""
    bound = call.bind(_CONSTANT)
    value = bound["value"]
    return tensor(f"self.parameter({ctx.runtime('gluon_constant_value')}({value.code}), requires_grad=False, "
                  f"name={bound['name'].code})", value.rank)


function_rule("mxnet.gluon.Parameter", "mxnet.gluon.parameter.Parameter", translate=translate_parameter,
              layout="source")
function_rule("mxnet.gluon.Constant", "mxnet.gluon.parameter.Constant", translate=translate_constant,
              layout="source")
# NDArray creation (`mx.nd.zeros((n, c))`, `F.ones`, `mx.nd.array([...])`, `mx.nd.arange(...)`): mxnet's float32
# default dtype, `ctx` ignored
_CREATION = {"zeros": "(shape, ctx=None, dtype=None, stype=None, name=None)",
             "ones": "(shape, ctx=None, dtype=None, stype=None, name=None)",
             "full": "(shape, val, ctx=None, dtype=None, out=None, name=None)",
             "array": "(source_array, ctx=None, dtype=None)",
             "arange": "(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype='float32', "
                       "name=None)"}
for _name, _signature in _CREATION.items():
    function_rule(OPS + _name, runtime=f"gluon_{_name}", signature=_signature, layout="source")
