"""Rules: MXNet operators as Gluon code calls them through `F` in `hybrid_forward` (or `mx.nd.*`), canonical
`mxnet.ndarray.<op>`: activations, clip, flatten, concat, softmax/log_softmax and the mean/sum/max/min reductions.

Ops that are torch's under other parameter names (`axis` for `dim`, `keepdims` for `keepdim`) are translated by
the torch rule, so their layout handling (axis remapping on channels-last tensors) is the same.
"""

from porter.ir.values import Value, python
from porter.rules.registry import FUNCTION_RULES, Signature, function_rule
from porter.rules.tensor_ops import translate_cat

OPS = "mxnet.ndarray."

function_rule(OPS + "Activation", runtime="gluon_activation", signature="(data, act_type, name=None)")
function_rule(OPS + "LeakyReLU", runtime="gluon_leaky_relu", signature="(data, act_type='leaky', slope=0.25, "
                                                                       "name=None)")
function_rule(OPS + "relu", runtime="gluon_relu", signature="(data, name=None)")
function_rule(OPS + "sigmoid", runtime="gluon_sigmoid", signature="(data, name=None)")
function_rule(OPS + "tanh", runtime="gluon_tanh", signature="(data, name=None)")
function_rule(OPS + "softsign", runtime="gluon_softsign", signature="(data, name=None)")
function_rule(OPS + "clip", runtime="gluon_clip", signature="(data, a_min, a_max, name=None)")
function_rule(OPS + "flatten", OPS + "Flatten", runtime="gluon_flatten", signature="(data, name=None)",
              layout="source", rank=2)


def translate_concat(translator, call):
    """F.concat(*data, dim=1): torch's cat of the same tensors along `dim` (channels-last inputs stay so)."""
    items = tuple(call.args)
    listed = Value(f"[{', '.join(v.code for v in items)}]", "tuple", items=items)
    dim = call.kwargs.get("dim", python("1", static=1))
    return translate_cat(translator, type(call)(call.canonical, [listed], {"dim": dim}, call.line))


function_rule(OPS + "concat", OPS + "Concat", translate=translate_concat, layout="any")


def as_torch_op(torch_name, gluon_signature, renames, defaults=None, refused=None):
    """A translate callable: bind the Gluon call by `gluon_signature`, rename its parameters to torch's (`renames`),
    fill torch parameters Gluon defaults differently (`defaults`: name -> literal), and translate with the torch
    rule. `refused`: Gluon parameter -> the only literal porter supports for it."""
    signature = Signature.parse(gluon_signature)

    def translate(translator, call):
        bound = call.bind(signature)
        for parameter, supported in (refused or {}).items():
            if parameter in bound and bound[parameter].code != supported:
                raise ValueError(f"{parameter}={bound[parameter].code} is not supported")
        data = bound.pop(signature.params[0])
        kwargs = {renames[k]: v for k, v in bound.items() if k in renames}
        for name, literal in (defaults or {}).items():
            kwargs.setdefault(name, python(literal, static=int(literal)))
        rule = FUNCTION_RULES[torch_name]
        torch_call = type(call)(torch_name, [data], kwargs, call.line)
        return rule.translate(translator, torch_call) if rule.translate is not None else \
            translator.declarative_rule(rule, torch_call)

    return translate


_REDUCTION = "(data, axis=None, keepdims=False, exclude=False, name=None)"
for _name, _torch in (("mean", "torch.mean"), ("sum", "torch.sum"), ("max", "torch.amax"), ("min", "torch.amin")):
    function_rule(OPS + _name, layout="any", translate=as_torch_op(
        _torch, _REDUCTION, {"axis": "dim", "keepdims": "keepdim"}, refused={"exclude": "False"}))
for _name in ("softmax", "log_softmax"):
    function_rule(OPS + _name, layout="any", translate=as_torch_op(
        f"torch.nn.functional.{_name}", "(data, axis=-1, temperature=None, dtype=None, use_length=False, name=None)",
        {"axis": "dim"}, defaults={"dim": "-1"}, refused={"temperature": "None", "use_length": "False"}))
function_rule("mxnet.init.Constant", "mxnet.initializer.Constant", runtime="GluonConstant", signature="(value)")
